#include "runtime/starpu/front_codelet.hpp"

#include "cpu/front_cholesky.hpp"

namespace starfront {
namespace {

void front_cpu(void* buffers[], void* cl_arg) {
  const auto* a = static_cast<const FrontTaskArgs*>(cl_arg);
  const FrontPlan& P = *a->plan;
  const idx_t s = a->front;
  std::vector<FrontResult>& results = *a->results;
  unsigned b = 0;
  const auto* values = reinterpret_cast<const double*>(STARPU_VECTOR_GET_PTR(buffers[b++]));
  auto* Ls = reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffers[b++]));
  double* cb = nullptr;
  if (P.cb_order(s) > 0) cb = reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffers[b++]));
  std::vector<const double*> child_cb;
  for (idx_t q = P.child_ptr[s]; q < P.child_ptr[s + 1]; ++q) {
    // A failed or skipped child leaves no usable CB: skip this front too
    // (its result is read after the child's task completed: data dependency).
    if (results[P.child_list[q]].state != FrontResult::State::done) {
      results[s].state = FrontResult::State::skipped;
      return;
    }
    child_cb.push_back(reinterpret_cast<const double*>(STARPU_MATRIX_GET_PTR(buffers[b++])));
  }
  results[s] = factor_front_cpu(P, s, values, Ls, cb, child_cb.data(), a->pivot_tol);
}

/// Cost model: microseconds on one CPU core from the task's flop count,
/// assuming 4 GFLOP/s (a conservative dense BLAS-3 rate per core).
double front_cost(struct starpu_task* task, unsigned /*nimpl*/) {
  return 1.0 + task->flops / 4.0e3;
}

struct starpu_perfmodel front_model = [] {
  struct starpu_perfmodel m {};
  m.type = STARPU_COMMON;
  m.cost_function = front_cost;
  m.symbol = "starfront_front";
  return m;
}();

}  // namespace

struct starpu_codelet front_codelet = [] {
  struct starpu_codelet cl {};
  cl.where = STARPU_CPU;
  cl.cpu_funcs[0] = front_cpu;
  cl.cpu_funcs_name[0] = "front_cpu";
  cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
  cl.model = &front_model;
  cl.name = "front";
  return cl;
}();

}  // namespace starfront
