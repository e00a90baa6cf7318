#!/usr/bin/env bash
# On the GPU machine of kind nvidia-h200-x2 (device run, carry the bundle
# folder; build and bundle here first: tools/setup.sh && tools/device/bundle.sh):
# the StarPU-MPI path with GPUs (issue 11). Open MPI travels in the bundle
# (bundle.sh), relocated with OPAL_PREFIX; ranks talk over shared memory
# (--mca btl self,vader). On a 3D 27-point Laplacian N^3 (default 60, the
# largest 3D problem of the GPU benchmarks), `starfront solve --json`:
#   one_rank_2gpu.json   1 process, shared-memory StarPU executor, 2 CUDA + NCPU1 CPU workers
#   mpi1_2gpu.json       mpirun -np 1, StarPU-MPI executor, 2 CUDA + NCPU1 CPU workers
#   mpi2_1gpu.json       mpirun -np 2, one GPU per rank (gpu-per-rank.sh), 1 CUDA + NCPU2 CPU workers each
# and env.txt, mpi.log (stderr of every run). Usage:
#   bash run-mpi.sh [N] [REPEAT]   (defaults 60 and 3: t_factor_s is the last of REPEAT factorisations)
# Environment: NCPU1 (default 28), NCPU2 (default 14), SCHED (default dmda).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bundle=$here/bundle.tar.xz
[ -f "$bundle" ] || bundle=$here/../../.device/bundle.tar.xz
work=/tmp/starfront-bundle
rm -rf "$work" && mkdir -p "$work" && tar -C "$work" -xJf "$bundle" || exit 1
b=$work/bundle
out=${OUT:-/tmp}
N=${1:-60}
rep=${2:-3}
ncpu1=${NCPU1:-28}
ncpu2=${NCPU2:-14}
sched=${SCHED:-dmda}
export OPAL_PREFIX=$b/mpi PATH=$b/mpi/bin:$PATH
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# PMIx's plugins stay behind (bundle.sh); the machine's own PMIx plugin folder
# (another PMIx version) is not loadable: quiet about both.
export PMIX_MCA_pcompress_base_silence_warning=1 PMIX_MCA_mca_base_component_show_load_errors=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STARPU_SILENT=1 STARPU_HOME=$work
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader --mca pml ob1
     --mca btl_vader_single_copy_mechanism none --mca btl_base_warn_component_unused 0)
{
  nvidia-smi -L; nproc; uname -r
  command -v mpirun; mpirun --version | head -1
  ldd "$b/bin/starfront" | grep -E "mpi|open-|pmix|starpu|cu|not found"
  "${mpi[@]}" -np 2 sh -c 'echo "rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE: CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset}"'
  "${mpi[@]}" -np 2 "$b/bin/gpu-per-rank.sh" sh -c 'echo "rank $OMPI_COMM_WORLD_RANK: CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"'
} 2>&1 | tee "$out/env.txt"
m=/tmp/lap3d_${N}_27.mtx
"$b/bin/starfront" generate laplace3d "$N" --stencil 27 -o "$m" || exit 1
run() {  # name, command...
  local name=$1; shift
  echo "== $name: $*" | tee -a "$out/mpi.log"
  local t0=$(date +%s.%N)
  timeout 100 "$@" >"$out/$name.json" 2>>"$out/mpi.log"
  echo "rc $? wall $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s" | tee -a "$out/mpi.log"
  python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print({k: j.get(k) for k in ("status","t_factor_s","t_solve_s","gflops","backward_error","cpu_workers","cuda_workers","refine_steps")}); m=j.get("mpi"); print(m and {k: m.get(k) for k in ("ranks","sent_bytes","predicted_sent_bytes","factor_bytes")}); print(m and m.get("solve_phase"))' "$out/$name.json" 2>&1 | tee -a "$out/mpi.log"
}
common=(solve "$m" --json --repeat "$rep" --sched "$sched")
run one_rank_2gpu "$b/bin/starfront" "${common[@]}" --ncpu "$ncpu1" --ncuda 2
run mpi1_2gpu "${mpi[@]}" -np 1 "$b/bin/starfront" "${common[@]}" --ncpu "$ncpu1" --ncuda 2
run mpi2_1gpu "${mpi[@]}" -np 2 "$b/bin/gpu-per-rank.sh" "$b/bin/starfront" "${common[@]}" --ncpu "$ncpu2" --ncuda 1
tail -n 40 "$out/mpi.log"
