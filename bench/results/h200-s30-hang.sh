# Diagnostic of the gpu-only hang: full output, thread states, GPU utilisation.
# (Session 30, run 5; raw record. gdb.tar.xz beside it held /usr/bin/gdb of this Debian machine with its
# libraries; on the device gdb stopped at start-up without Python's standard library, so only the
# thread states of /proc came back. gpu_bench_fix was the gpu_bench of the fix.)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" starfront-hang >/dev/null
cd $out
mkdir -p /tmp/g && tar -C /tmp/g -xJf "$here/gdb.tar.xz"
G() { LD_LIBRARY_PATH=/tmp/g/gdb/lib /tmp/g/gdb/gdb -nx "$@"; }
G --version > tools.txt 2>&1
for r in 1 2; do
  $b/bin/gpu_bench --repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --watchdog 10 --gpu-graph --fronts-on-gpu-only lap3d:60 > run$r.out 2> run$r.err &
  pid=$!
  sleep 35
  if kill -0 $pid 2>/dev/null; then
    { echo "still running after 35 s"; nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv;
      for t in /proc/$pid/task/*; do echo "$(basename $t) $(cat $t/comm) $(cat $t/wchan) $(awk '{print $3}' $t/stat) $(cut -d' ' -f1 $t/syscall 2>/dev/null)"; done;
      LD_LIBRARY_PATH=/tmp/g/gdb/lib timeout 90 /tmp/g/gdb/gdb -nx -p $pid -batch -ex "thread apply all bt 25" 2>&1 | head -700; } > hang$r.txt 2>&1
    kill -9 $pid; wait $pid; break
  fi
  wait $pid; echo "exit $?" >> run$r.err
done
for r in 1 2 3; do
  echo "### fix run $r" >> fix.txt
  timeout 45 $here/gpu_bench_fix --repeat 3 --ncpu 16 --no-cpu --no-cholmod --no-cusolversp --watchdog 10 --gpu-graph --fronts-on-gpu-only lap3d:60 2>&1 | grep -E "^\| lap|watchdog|error|fail|phases" >> fix.txt
  echo "exit ${PIPESTATUS[0]}" >> fix.txt
done
