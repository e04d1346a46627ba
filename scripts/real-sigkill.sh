#!/bin/bash
# kill -9 of `vmlab real` at three stages (setup, running, teardown), each followed by the next
# `vmlab real`, showing what is left (swapon --show, /sys/fs/cgroup/memory, the work directory,
# ps) after the kill and after the next run. Root, cgroup v1; touches only vmlab-real-<pid>
# objects of the runs it starts. docs/REAL.md records a run of it.
#   sudo WORK=/path/to/empty/dir scripts/real-sigkill.sh
HERE=$(mktemp -d)
trap 'rm -rf "$HERE"' EXIT
cat > "$HERE/stages.toml" <<'TOML'
linger = "60s"
[machine]
memory = "32MiB"

[swap]
size = "32MiB"

[[file]]
name = "f{i}"
count = 4
size = "16MiB"

[[process]]
name = "stay"
program = '''
mmap a anon 4MiB
touch a write
sleep forever
'''
TOML
sed 's/linger = "60s"/duration = "1s"/' "$HERE/stages.toml" > "$HERE/short.toml"
cat > "$HERE/tiny.toml" <<'TOML'
[machine]
memory = "16MiB"

[[process]]
name = "p"
program = '''
mmap a anon 1MiB
touch a write
'''
TOML
V=${VMLAB:-target/ci/vmlab}
W=${WORK:?set WORK to an existing, empty, disk-backed directory}
show() {
  echo "\$ swapon --show | grep vmlab-real-"; swapon --show | grep vmlab-real- || echo "(none)"
  echo "\$ ls -d /sys/fs/cgroup/memory/vmlab-real-*"; ls -d /sys/fs/cgroup/memory/vmlab-real-* 2>/dev/null || echo "(none)"
  echo "\$ ls $W"; ls $W | grep . || echo "(empty)"
  L=$(echo $P $T | tr ' ' ,)
  echo "\$ ps -o pid,ppid,stat,comm -p $L --ppid $P"; sleep 0.1; ps -o pid,ppid,stat,comm -p $L --ppid $P | grep -v PID || echo "(none)"
}
stage() {  # name scenario condition
  for try in $(seq 20); do
    SEEN=
    T=
    $V real $2 --dir $W >/dev/null 2>&1 & P=$!
    until eval "$3" || ! kill -0 $P 2>/dev/null; do sleep 0.001; done
    kill -0 $P 2>/dev/null && break
    # The run ended before a poll saw the stage (teardown takes milliseconds): again.
    wait $P
  done
  T=$(cat /sys/fs/cgroup/memory/vmlab-real-$P/cgroup.procs 2>/dev/null | tr '\n' ' ')
  kill -9 $P; wait $P 2>/dev/null
  echo "== kill -9 during $1 (vmlab pid $P; its cgroup's tasks then: ${T:-none})"
  show
  echo "\$ vmlab real tiny.toml --dir $W"
  $V real "$HERE/tiny.toml" --dir $W 2>&1 >/dev/null | grep -v '^$'
  show
  echo
}
stage setup $HERE/stages.toml '[ -d $W/vmlab-real-$P/files ]'
stage running $HERE/stages.toml 'grep -q . /sys/fs/cgroup/memory/vmlab-real-$P/cgroup.procs 2>/dev/null'
# teardown: the 1 s run is over, its child gone from the cgroup, the cgroup not yet removed
stage teardown $HERE/short.toml 'grep -q . /sys/fs/cgroup/memory/vmlab-real-$P/cgroup.procs 2>/dev/null && SEEN=1; [ -n "$SEEN" ] && [ -d /sys/fs/cgroup/memory/vmlab-real-$P ] && ! grep -q . /sys/fs/cgroup/memory/vmlab-real-$P/cgroup.procs 2>/dev/null'
