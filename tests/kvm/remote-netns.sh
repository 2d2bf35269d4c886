#!/bin/sh
# A GPU server and a VMM in two network namespaces joined by a veth pair
# (docs/remote.md): the server on the host backend in one, guests in the
# other reaching it over UCX, with netem delays of 0, 10 and 100 us on the
# VMM's side where the kernel has sch_netem (said, and skipped, where not).
# Needs root, iproute2 and KVM (run through if-kvm.sh); exits 77 with the
# reason when something is missing.
# Usage: remote-netns.sh KVMTOOL_GPU GUEST_DIR
# Environment: IP, TC: the iproute2 programs (default ip, tc from PATH);
# REMOTE_GUESTS: the guests run at each delay (default vecadd matrixMul
# streamsEvents cudaGraphs); REQUIRE_NETEM=1: a kernel without sch_netem fails
# the test instead of skipping the delayed runs (the nested machine's has it).
set -u
vmm=$1 guests=$2
IP=${IP:-ip} TC=${TC:-tc}
[ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
command -v "$IP" >/dev/null && "$IP" netns list >/dev/null 2>&1 || { echo "SKIP: no ip (iproute2) with netns"; exit 77; }
ns=kvmgpu$$ a=kg$$a b=kg$$b
cleanup() { "$IP" netns del ${ns}s 2>/dev/null; "$IP" netns del ${ns}v 2>/dev/null; rm -rf "$work"; }
work=$(mktemp -d); trap cleanup EXIT
mkdir -p /run/netns 2>/dev/null
"$IP" netns add ${ns}s && "$IP" netns add ${ns}v || { echo "SKIP: cannot make network namespaces here"; exit 77; }
"$IP" link add $a type veth peer name $b || { echo "SKIP: cannot make a veth pair here"; exit 77; }
"$IP" link set $a netns ${ns}s && "$IP" link set $b netns ${ns}v
"$IP" -n ${ns}s addr add 10.231.0.1/24 dev $a && "$IP" -n ${ns}v addr add 10.231.0.2/24 dev $b
for n in ${ns}s ${ns}v; do "$IP" -n $n link set lo up; done
"$IP" -n ${ns}s link set $a up && "$IP" -n ${ns}v link set $b up
head -c 32 /dev/urandom | base64 > "$work/key"; chmod 600 "$work/key"
# Each side offers UCX its veth only: the other namespace's loopback is no way back.
UCX_TLS=tcp,self UCX_NET_DEVICES=$a "$IP" netns exec ${ns}s "$vmm" gpu-server --key "$work/key" --vgpu host \
  --listen 10.231.0.1:18515 > "$work/server.log" 2>&1 &
server=$!
# Listening before the first guest asks (at most 10 s).
for i in $(seq 100); do grep -q "listening on" "$work/server.log" 2>/dev/null && break; sleep 0.1; done
grep -q "listening on" "$work/server.log" || { echo "FAIL: the GPU server did not start"; cat "$work/server.log"; exit 1; }
runs=0 failed=0
for delay in 0 10 100; do
  if [ $delay -gt 0 ]; then
    if ! "$IP" netns exec ${ns}v "$TC" qdisc replace dev $b root netem delay ${delay}us 2>"$work/tc.err"; then
      [ "${REQUIRE_NETEM:-0}" = 1 ] && { echo "FAIL: no netem delay: $(head -1 "$work/tc.err")"; exit 1; }
      echo "netem: this kernel has no sch_netem; the ${delay} us run is skipped"
      continue
    fi
    # The delay holds: UCX's own connection set-up waits for it too.
    "$IP" netns exec ${ns}v "$TC" qdisc show dev $b | grep -q "delay" || { echo "FAIL: netem not in place on $b"; exit 1; }
  fi
  for g in ${REMOTE_GUESTS:-vecadd matrixMul streamsEvents cudaGraphs}; do
    runs=$((runs + 1))
    if UCX_TLS=tcp,self UCX_NET_DEVICES=$b KVMGPU_GUEST_DIR="$guests" "$IP" netns exec ${ns}v "$vmm" run --guest $g --mem 256M \
        --pages 4K --gpu-remote 10.231.0.1:18515 --gpu-key "$work/key" > "$work/$g-$delay.log" 2>&1; then
      echo "remote $g, delay $delay us: pass"
    else
      failed=$((failed + 1)); echo "remote $g, delay $delay us: FAIL"; tail -5 "$work/$g-$delay.log"
    fi
  done
done
kill -INT $server; wait $server
tail -1 "$work/server.log"
# Every run was a session that ended, and the server refused none.
grep -q "stopped; $runs sessions, 0 refused" "$work/server.log" || { echo "FAIL: the server saw other sessions"; cat "$work/server.log"; exit 1; }
[ $failed -eq 0 ] || { echo "FAIL: $failed of $runs remote runs"; exit 1; }
echo "PASS: $runs remote runs across two network namespaces"
