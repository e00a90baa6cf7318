// Parsing the readable task names that the StarPU executor records
// (STARPU_NAME = task_name(G, task), plan/task_graph.hpp) back into a kind
// and the front or tile they refer to, so that a trace can be grouped by
// kind and related to the plan.
#pragma once

#include <string_view>

#include "plan/task_graph.hpp"

namespace starfront::trace {

/// The fields of one readable task name. Which fields are meaningful depends
/// on the kind (the others keep their defaults):
///   "subtree s12 (412 fronts)"     front 12, fronts 412
///   "front f88 (40x12)"            front 88, rows 40, cols 12
///   "assemble f9 (col 1)"          front 9, j 1
///   "extend_add f88->f90 (col 1)"  child 88, front 90, j 1
///   "potrf f1234 (2,2)"            front 1234, k 2
///   "trsm f7 (3,1)"                front 7, i 3, k 1
///   "syrk f7 (2,2) k1"             front 7, j 2, k 1
///   "gemm f7 (3,2) k1"             front 7, i 3, j 2, k 1
struct ParsedTaskName {
  TaskKind kind = TaskKind::front;
  long long front = -1;   ///< the front (subtree: its root front)
  long long child = -1;   ///< extend_add: the child front
  long long fronts = 0;   ///< subtree: number of fronts it fuses
  long long rows = 0, cols = 0;  ///< front: order and fully-summed columns
  int i = 0, j = 0, k = 0;       ///< tile indices (as in Task)
};

/// Parses a name produced by task_name(). Returns false (and leaves `out`
/// unspecified) for anything else: unknown kind, missing or extra text,
/// negative or out-of-range numbers, inconsistent tile indices (potrf and
/// syrk repeat their diagonal index).
bool parse_task_name(std::string_view name, ParsedTaskName& out);

/// The kind of a task from its codelet name (task_kind_name(): "subtree",
/// "front", ..., "gemm"). Returns false for an unknown name.
bool parse_task_kind(std::string_view kind, TaskKind& out);

}  // namespace starfront::trace
