#!/bin/sh
# Runs a command that needs /dev/kvm, or says why not and exits 77, which the
# kvm-labelled CLI tests declare as SKIP_RETURN_CODE: ctest reports a skip
# with this reason, never a silent pass.
# Usage: if-kvm.sh COMMAND [ARGS...]
if [ ! -e /dev/kvm ]; then echo "SKIP: needs KVM: no /dev/kvm on this host"; exit 77; fi
# KVM's misc device is character 10:232 (hex a:e8); anything else there is not KVM.
if [ "$(stat -L -c %t:%T /dev/kvm)" != "a:e8" ]; then echo "SKIP: needs KVM: /dev/kvm is not the KVM device"; exit 77; fi
if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then echo "SKIP: needs KVM: /dev/kvm is not read-writable by $(id -un)"; exit 77; fi
exec "$@"
