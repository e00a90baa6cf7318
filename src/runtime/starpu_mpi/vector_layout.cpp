#include "runtime/starpu_mpi/vector_layout.hpp"

#include <algorithm>
#include <string>

namespace starfront {

idx_t VectorLayout::count(int r) const {
  switch (kind) {
    case Kind::root: return r == 0 ? n : 0;
    case Kind::owner: return S->local_count[r];
    case Kind::block: return start[r + 1] - start[r];
  }
  return 0;
}

std::vector<idx_t> VectorLayout::rows(int r) const {
  std::vector<idx_t> out;
  out.reserve(static_cast<std::size_t>(count(r)));
  if (kind == Kind::owner) {
    const std::vector<idx_t>& perm = S->graph->plan->symbolic->perm;
    for (idx_t k = 0; k < n; ++k)
      if (S->row_owner[k] == r) out.push_back(perm[k]);
  } else {
    const idx_t first = kind == Kind::root ? 0 : start[r];
    for (idx_t i = 0; i < count(r); ++i) out.push_back(first + i);
  }
  return out;
}

std::pair<int, idx_t> VectorLayout::locate(idx_t g) const {
  switch (kind) {
    case Kind::root: return {0, g};
    case Kind::owner: {
      const idx_t k = iperm[g];
      return {S->row_owner[k], S->local_index[k]};
    }
    case Kind::block: {
      const int r = static_cast<int>(std::upper_bound(start.begin(), start.end(), g) - start.begin()) - 1;
      return {r, g - start[r]};
    }
  }
  return {0, g};
}

VectorLayout root_layout(idx_t n, int nranks) {
  VectorLayout L;
  L.kind = VectorLayout::Kind::root;
  L.n = n;
  L.nranks = nranks;
  return L;
}

VectorLayout owner_layout(const SolveGraph& S) {
  VectorLayout L;
  L.kind = VectorLayout::Kind::owner;
  L.S = &S;
  L.nranks = S.nranks;
  const std::vector<idx_t>& perm = S.graph->plan->symbolic->perm;
  L.n = static_cast<idx_t>(perm.size());
  L.iperm.assign(perm.size(), 0);
  for (idx_t k = 0; k < L.n; ++k) L.iperm[perm[k]] = k;
  return L;
}

Status block_layout(idx_t n, idx_t first, idx_t count, MPI_Comm comm, VectorLayout& out) {
  int nranks = 1;
  MPI_Comm_size(comm, &nranks);
  long long mine[2] = {first, count};
  std::vector<long long> all(2 * static_cast<std::size_t>(nranks));
  MPI_Allgather(mine, 2, MPI_LONG_LONG, all.data(), 2, MPI_LONG_LONG, comm);
  VectorLayout L;
  L.kind = VectorLayout::Kind::block;
  L.n = n;
  L.nranks = nranks;
  L.start.assign(static_cast<std::size_t>(nranks) + 1, 0);
  for (int r = 0; r < nranks; ++r) {
    if (all[2 * r + 1] < 0 || all[2 * r] != L.start[r])
      return Status::error(StatusCode::invalid_argument,
                           "distributed vector: rank " + std::to_string(r) + " holds rows [" +
                               std::to_string(all[2 * r]) + ", " + std::to_string(all[2 * r] + all[2 * r + 1]) +
                               "), expected a block starting at row " + std::to_string(L.start[r]) +
                               " (contiguous blocks in rank order from row 0, 0-based)");
    L.start[r + 1] = L.start[r] + all[2 * r + 1];
  }
  if (L.start[nranks] != n)
    return Status::error(StatusCode::invalid_argument, "distributed vector: the ranks' blocks cover " +
                                                           std::to_string(L.start[nranks]) + " rows, the matrix has " +
                                                           std::to_string(n));
  out = std::move(L);
  return Status::success();
}

void redistribute(const VectorLayout& from, const double* in, idx_t ldi, const VectorLayout& to, double* out,
                  idx_t ldo, idx_t nrhs, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const std::vector<idx_t> mine = from.rows(rank);
  std::vector<int> scount(nranks, 0), rcount(nranks, 0), sdispl(nranks + 1, 0), rdispl(nranks + 1, 0);
  std::vector<std::pair<int, idx_t>> where(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) ++scount[(where[i] = to.locate(mine[i])).first];
  MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, comm);
  for (int r = 0; r < nranks; ++r) sdispl[r + 1] = sdispl[r] + scount[r], rdispl[r + 1] = rdispl[r] + rcount[r];
  // Positions at the destination, then the values row by row (nrhs each).
  std::vector<long long> spos(mine.size()), rpos(static_cast<std::size_t>(rdispl[nranks]));
  std::vector<double> sval(mine.size() * static_cast<std::size_t>(nrhs)),
      rval(static_cast<std::size_t>(rdispl[nranks]) * static_cast<std::size_t>(nrhs));
  std::vector<int> fill(sdispl.begin(), sdispl.end() - 1);
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const int q = fill[where[i].first]++;
    spos[q] = where[i].second;
    for (idx_t c = 0; c < nrhs; ++c) sval[q * nrhs + c] = in[static_cast<idx_t>(i) + c * ldi];
  }
  MPI_Alltoallv(spos.data(), scount.data(), sdispl.data(), MPI_LONG_LONG, rpos.data(), rcount.data(),
                rdispl.data(), MPI_LONG_LONG, comm);
  // The values travel as rows of nrhs doubles (one MPI datatype), so counts
  // and displacements stay in rows: no int overflow for n·nrhs > 2³¹.
  MPI_Datatype row;
  MPI_Type_contiguous(static_cast<int>(nrhs), MPI_DOUBLE, &row);
  MPI_Type_commit(&row);
  MPI_Alltoallv(sval.data(), scount.data(), sdispl.data(), row, rval.data(), rcount.data(), rdispl.data(), row,
                comm);
  MPI_Type_free(&row);
  for (std::size_t q = 0; q < rpos.size(); ++q)
    for (idx_t c = 0; c < nrhs; ++c) out[rpos[q] + c * ldo] = rval[q * nrhs + c];
}

}  // namespace starfront
