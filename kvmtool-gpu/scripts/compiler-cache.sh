# Sourced by the build scripts (after they set $repo): compile through ccache
# when it is installed, with paths taken relative to the checkout, so every
# clone of the repository, CI's clean ones included, shares one cache. A
# launcher already set in the environment is kept.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
  export CCACHE_NOHASHDIR=1
fi
