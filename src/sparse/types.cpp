#include "sparse/types.hpp"

namespace starfront {

const char* status_name(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid_argument";
    case StatusCode::io_error: return "io_error";
    case StatusCode::parse_error: return "parse_error";
    case StatusCode::unsupported: return "unsupported";
    case StatusCode::not_symmetric: return "not_symmetric";
    case StatusCode::not_positive_definite: return "not_positive_definite";
    case StatusCode::ordering_error: return "ordering_error";
    case StatusCode::runtime_error: return "runtime_error";
    case StatusCode::out_of_memory: return "out_of_memory";
    case StatusCode::singular: return "singular";
  }
  return "unknown";
}

}  // namespace starfront
