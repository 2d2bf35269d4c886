# Sourced by the build scripts (after they set $repo): compile through ccache
# when it is installed, with paths taken relative to the checkout, so every
# clone of the repository, CI's clean ones included, shares one cache. A
# launcher already set in the environment is kept. The test command builds
# the tree three ways (plain, ASan, clang fuzz), about 5 GB of objects: past
# ccache's default size of 5 GB one build evicts another's, so the cache is
# allowed 12 GB unless the environment or ccache's own configuration says.
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
  export CCACHE_NOHASHDIR=1
  case ${CCACHE_MAXSIZE:-}/$(ccache --get-config max_size 2>/dev/null) in
    /5G | /5.0G | "/5.0 GB") export CCACHE_MAXSIZE=12G ;;
  esac
fi
