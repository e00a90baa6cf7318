// Proof by replay that a contribution-block slot plan is safe: random valid
// execution orders of the final graph (random topological orders of
// task_dependencies, which includes the planner's added edges) are simulated
// and every slot's occupancy is checked (DESIGN.md, point 5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/task_graph.hpp"

namespace starfront {

/// Outcome of a check.
struct SlotCheckResult {
  idx_t orders = 0;      ///< execution orders replayed
  idx_t violations = 0;  ///< orders with at least one violation
  std::string first;     ///< description of the first violation seen ("" if none)
  bool ok() const { return violations == 0; }
};

/// Replays `orders` random topological orders (seeded by `seed`; order 0 is
/// the submission order itself) of G's dependencies. A violation is: a task
/// that produces block b (its first access) while b's slot still holds a
/// block with an access pending; a task that accesses a block its slot no
/// longer holds; a CB block without a slot of sufficient capacity. With
/// `strict` (what the runtime relies on: one handle per slot, accessed in
/// submission order) the blocks of a slot must moreover be produced in
/// submission order, so that the handle adds no dependency of its own.
/// Cost: O(orders · (tasks + accesses + dependencies)).
SlotCheckResult check_slots(const TaskGraph& G, idx_t orders, std::uint64_t seed, bool strict = true);

/// The same check on one given execution order (a permutation of the task
/// indices; it must respect the dependencies, else the result says so).
SlotCheckResult check_slots_in_order(const TaskGraph& G, const std::vector<idx_t>& order,
                                     bool strict = true);

}  // namespace starfront
