#include "task_name_parse.hpp"

#include <charconv>
#include <climits>

namespace starfront::trace {
namespace {

/// A cursor over a name: each step consumes an exact piece or a number and
/// fails (sticky) when the text does not match.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}

  /// Consumes `lit` exactly.
  Cursor& lit(std::string_view lit) {
    if (ok_ && s_.substr(0, lit.size()) == lit)
      s_.remove_prefix(lit.size());
    else
      ok_ = false;
    return *this;
  }
  /// Consumes a non-negative decimal number (no sign, at least one digit).
  template <class T>
  Cursor& num(T& v) {
    if (!ok_ || s_.empty() || s_[0] < '0' || s_[0] > '9') {
      ok_ = false;
      return *this;
    }
    const auto [p, ec] = std::from_chars(s_.data(), s_.data() + s_.size(), v);
    if (ec != std::errc()) {
      ok_ = false;
      return *this;
    }
    s_.remove_prefix(static_cast<std::size_t>(p - s_.data()));
    return *this;
  }
  /// True when every step matched and nothing is left.
  bool done() const { return ok_ && s_.empty(); }

 private:
  std::string_view s_;
  bool ok_ = true;
};

}  // namespace

bool parse_task_kind(std::string_view kind, TaskKind& out) {
  for (int k = 0; k < kTaskKinds; ++k)
    if (kind == task_kind_name(static_cast<TaskKind>(k))) {
      out = static_cast<TaskKind>(k);
      return true;
    }
  return false;
}

bool parse_task_name(std::string_view name, ParsedTaskName& out) {
  const std::size_t sp = name.find(' ');
  if (sp == std::string_view::npos || !parse_task_kind(name.substr(0, sp), out.kind)) return false;
  Cursor c(name.substr(sp + 1));
  int diag = 0;
  switch (out.kind) {
    case TaskKind::subtree: c.lit("s").num(out.front).lit(" (").num(out.fronts).lit(" fronts)"); break;
    case TaskKind::front: c.lit("f").num(out.front).lit(" (").num(out.rows).lit("x").num(out.cols).lit(")"); break;
    case TaskKind::assemble: c.lit("f").num(out.front).lit(" (col ").num(out.j).lit(")"); break;
    case TaskKind::extend_add:
      c.lit("f").num(out.child).lit("->f").num(out.front).lit(" (col ").num(out.j).lit(")");
      break;
    case TaskKind::potrf: c.lit("f").num(out.front).lit(" (").num(out.k).lit(",").num(diag).lit(")"); break;
    case TaskKind::trsm: c.lit("f").num(out.front).lit(" (").num(out.i).lit(",").num(out.k).lit(")"); break;
    case TaskKind::syrk:
      c.lit("f").num(out.front).lit(" (").num(out.j).lit(",").num(diag).lit(") k").num(out.k);
      break;
    case TaskKind::gemm:
      c.lit("f").num(out.front).lit(" (").num(out.i).lit(",").num(out.j).lit(") k").num(out.k);
      break;
  }
  if (!c.done()) return false;
  if (out.kind == TaskKind::potrf && diag != out.k) return false;
  if (out.kind == TaskKind::syrk && diag != out.j) return false;
  if (out.kind == TaskKind::subtree && out.fronts < 1) return false;
  return true;
}

}  // namespace starfront::trace
