# Shell helpers shared by the bench scripts (sourced, not run): free ports, a process's CPU time,
# waiting for an aggregator to go idle. Loopback only.

# port: a free TCP port on 127.0.0.1.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# cpu_ms PID: CPU milliseconds (user + system, all threads) the process has used so far.
bench_tick_ms=$((1000 / $(getconf CLK_TCK)))
cpu_ms() { awk -v t="$bench_tick_ms" '{print ($14 + $15) * t}' "/proc/$1/stat"; }

# settle_pids PID...: waits (at most 300 s) until the processes together used under 5% of a core
# in each of 4 seconds in a row (the rollup pass waits 2 s after the last write to a minute, then
# runs every second; flushes and compactions follow a load). Sets settle_seconds.
settle_pids() {
  local t0=$SECONDS idle=0 before after p
  while (( SECONDS - t0 < 300 && idle < 4 )); do
    before=0; for p in "$@"; do before=$((before + $(cpu_ms "$p"))); done
    sleep 1
    after=0; for p in "$@"; do after=$((after + $(cpu_ms "$p"))); done
    if (( after - before < 50 )); then idle=$((idle + 1)); else idle=0; fi
  done
  settle_seconds=$((SECONDS - t0 - idle))
}

# machine_line: what the figures were taken on.
machine_line() {
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg)"
}
