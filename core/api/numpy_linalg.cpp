// jnp products: dot, vdot, matmul, tensordot, inner, outer and two-operand einsum, all through dot_general.
#include <algorithm>
#include <map>
#include <numeric>

#include "api/numpy.h"
#include "api/session.h"
#include "base/error.h"

namespace shardscope::api::jnp {
namespace {

// dot_general, then the output cast JAX applies (to the promoted type, weak when both operands are).
Value contract(const Value& a, const Value& b, const lax::DotDimensionNumbers& dims, std::optional<DType> preferred,
               const ParamValue& out_sharding = ParamValue::None{}) {
  WeakDType out{};
  if (preferred) {
    out = {*preferred, false};
  } else {
    out = result_type({a, b});
  }
  // Before JAX 0.4.14 jnp.dot left preferred_element_type unset (None).
  const bool passes_type = preferred || session().profile.has(JaxFeature::kJnpDotPassesPreferredType);
  return lax::convert_element_type(
      lax::dot_general(a, b, dims, passes_type ? std::optional<DType>(out.dtype) : std::nullopt, out_sharding),
      out.dtype, out.weak);
}

std::string aval_text(const Value& x) { return x.aval().str_short(false); }

}  // namespace

Value dot(const Value& a, const Value& b, std::optional<DType> preferred_element_type) {
  const int64_t a_ndim = ndim_of(a);
  const int64_t b_ndim = ndim_of(b);
  lax::DotDimensionNumbers dims;
  if (a_ndim != 0 && b_ndim != 0) {
    dims.lhs_contract = {a_ndim - 1};
    dims.rhs_contract = {b_ndim == 1 ? 0 : b_ndim - 2};
  }
  return contract(a, b, dims, preferred_element_type);
}

Value vdot(const Value& a, const Value& b) {
  const Value flat_a = ravel(a);
  return dot(flat_a, ravel(b));
}

Value matmul(const Value& a, const Value& b, std::optional<DType> preferred_element_type) {
  for (int i = 0; i < 2; ++i) {
    const Value& x = i == 0 ? a : b;
    if (ndim_of(x) < 1) {
      throw value_error("matmul input operand " + std::to_string(i) + " must have ndim at least 1, but it has ndim " +
                        std::to_string(ndim_of(x)));
    }
  }
  const bool a_is_mat = ndim_of(a) > 1;
  const bool b_is_mat = ndim_of(b) > 1;
  std::vector<std::optional<int64_t>> a_batch_dims;
  std::vector<std::optional<int64_t>> b_batch_dims;
  if (a_is_mat) a_batch_dims.assign(shape_of(a).begin(), shape_of(a).end() - 2);
  if (b_is_mat) b_batch_dims.assign(shape_of(b).begin(), shape_of(b).end() - 2);
  const std::size_t batch = std::max(a_batch_dims.size(), b_batch_dims.size());
  a_batch_dims.insert(a_batch_dims.begin(), batch - a_batch_dims.size(), std::nullopt);
  b_batch_dims.insert(b_batch_dims.begin(), batch - b_batch_dims.size(), std::nullopt);

  std::vector<int64_t> a_squeeze, b_squeeze, both_squeeze, a_batch, b_batch, idx_batch, idx_a_other, idx_b_other;
  const auto count = [](const std::vector<int64_t>& v) { return static_cast<int64_t>(v.size()); };
  for (std::size_t i = 0; i < batch; ++i) {
    const auto ba = a_batch_dims[i];
    const auto bb = b_batch_dims[i];
    const auto index = static_cast<int64_t>(i);
    if (!ba) {
      idx_b_other.push_back(index);
    } else if (!bb) {
      idx_a_other.push_back(index);
    } else if (*ba == 1 && *bb == 1) {
      a_squeeze.push_back(count(idx_batch) + count(idx_a_other) + count(a_squeeze));
      b_squeeze.push_back(count(idx_batch) + count(idx_b_other) + count(b_squeeze));
      both_squeeze.push_back(index);
    } else if (*ba == 1) {
      idx_b_other.push_back(index);
      a_squeeze.push_back(count(idx_batch) + count(idx_a_other) + count(a_squeeze));
    } else if (*bb == 1) {
      idx_a_other.push_back(index);
      b_squeeze.push_back(count(idx_batch) + count(idx_b_other) + count(b_squeeze));
    } else if (*ba == *bb) {
      a_batch.push_back(count(idx_batch) + count(idx_a_other));
      b_batch.push_back(count(idx_batch) + count(idx_b_other));
      idx_batch.push_back(index);
    } else {
      throw value_error("Incompatible types for matmul arguments: " + aval_text(a) + " and " + aval_text(b));
    }
  }
  if (a_is_mat) idx_a_other.push_back(static_cast<int64_t>(batch));
  if (b_is_mat) idx_b_other.push_back(static_cast<int64_t>(batch) + (a_is_mat ? 1 : 0));
  std::vector<int64_t> order = idx_batch;
  order.insert(order.end(), idx_a_other.begin(), idx_a_other.end());
  order.insert(order.end(), idx_b_other.begin(), idx_b_other.end());
  std::vector<int64_t> perm(order.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
    return order[static_cast<std::size_t>(x)] < order[static_cast<std::size_t>(y)];
  });

  const WeakDType out = preferred_element_type ? WeakDType{*preferred_element_type, false} : result_type({a, b});
  const Value lhs = lax::squeeze(a, a_squeeze);
  const Value rhs = lax::squeeze(b, b_squeeze);
  lax::DotDimensionNumbers dims{{ndim_of(lhs) - 1}, {ndim_of(rhs) - 1 - (b_is_mat ? 1 : 0)}, a_batch, b_batch};
  const bool passes_type = preferred_element_type || session().profile.has(JaxFeature::kJnpMatmulPassesPreferredType);
  Value result = lax::transpose(
      lax::dot_general(lhs, rhs, dims, passes_type ? std::optional<DType>(out.dtype) : std::nullopt), perm);
  if (!both_squeeze.empty()) result = lax::expand_dims(result, both_squeeze);
  return lax::convert_element_type(result, out.dtype, out.weak);
}

Value tensordot(const Value& a, const Value& b, const std::vector<int64_t>& a_axes,
                const std::vector<int64_t>& b_axes) {
  if (a_axes.size() != b_axes.size()) {
    throw type_error("tensordot requires axes lists to have equal length, got " + std::to_string(a_axes.size()) +
                     " and " + std::to_string(b_axes.size()) + ".");
  }
  lax::DotDimensionNumbers dims;
  for (const int64_t x : a_axes) dims.lhs_contract.push_back(canonicalize_axis(x, ndim_of(a)));
  for (const int64_t x : b_axes) dims.rhs_contract.push_back(canonicalize_axis(x, ndim_of(b)));
  return contract(a, b, dims, std::nullopt);
}

Value tensordot(const Value& a, const Value& b, int64_t axes) {
  if (axes > std::min(ndim_of(a), ndim_of(b))) {
    throw type_error("Number of tensordot axes (axes " + std::to_string(axes) + ") exceeds input ranks (" +
                     std::to_string(ndim_of(a)) + " and " + std::to_string(ndim_of(b)) + ")");
  }
  lax::DotDimensionNumbers dims;
  for (int64_t i = 0; i < axes; ++i) {
    dims.lhs_contract.push_back(ndim_of(a) - axes + i);
    dims.rhs_contract.push_back(i);
  }
  return contract(a, b, dims, std::nullopt);
}

Value inner(const Value& a, const Value& b) {
  if (ndim_of(a) == 0 || ndim_of(b) == 0) return multiply(a, b);
  return tensordot(a, b, std::vector<int64_t>{-1}, std::vector<int64_t>{-1});
}

Value outer(const Value& a, const Value& b) {
  const auto promoted = promote_dtypes({a, b});
  const Value column = getitem(ravel(promoted[0]), {IndexItem::all(), IndexItem::newaxis()});
  const Value row = getitem(ravel(promoted[1]), {IndexItem::newaxis(), IndexItem::all()});
  return multiply(column, row);
}

namespace {

// Labels only `x` has (not the output, not any other operand) are summed away first.
Value sum_private_labels(const Value& x, std::string& labels, const std::string& elsewhere) {
  std::vector<int64_t> axes;
  std::string kept;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (elsewhere.find(labels[i]) == std::string::npos) {
      axes.push_back(static_cast<int64_t>(i));
    } else {
      kept += labels[i];
    }
  }
  labels = kept;
  return axes.empty() ? x : sum(x, axes);
}

// One pairwise contraction: shared labels still needed later are batch dimensions, the others contract.
// `out_spec` (the einsum's out_sharding, one entry per output label) types the product when it is the last one.
Value contract_pair(const Value& x, const std::string& la, const Value& y, const std::string& lb,
                    const std::string& needed, std::string& result_labels, const std::string& out,
                    const std::optional<PartitionSpec>& out_spec) {
  lax::DotDimensionNumbers dims;
  result_labels.clear();
  for (std::size_t i = 0; i < la.size(); ++i) {
    const auto j = lb.find(la[i]);
    if (j == std::string::npos) continue;
    if (needed.find(la[i]) != std::string::npos) {
      dims.lhs_batch.push_back(static_cast<int64_t>(i));
      dims.rhs_batch.push_back(static_cast<int64_t>(j));
      result_labels += la[i];
    } else {
      dims.lhs_contract.push_back(static_cast<int64_t>(i));
      dims.rhs_contract.push_back(static_cast<int64_t>(j));
    }
  }
  for (const char c : la) {
    if (lb.find(c) == std::string::npos) result_labels += c;
  }
  for (const char c : lb) {
    if (la.find(c) == std::string::npos) result_labels += c;
  }
  ParamValue out_sharding = ParamValue::None{};
  if (out_spec) {
    // The product's dims in its own label order take the entries the output gives their labels.
    std::vector<SpecEntry> entries;
    for (const char c : result_labels) {
      const auto at = out.find(c);
      entries.push_back(at != std::string::npos && at < out_spec->entries().size() ? out_spec->entries()[at]
                                                                                   : SpecEntry{});
    }
    PartitionSpec product(std::move(entries));
    // The partial sums a contraction leaves unreduced belong to the product, whatever its dim order.
    if (!out_spec->unreduced().empty()) product.set_unreduced(out_spec->unreduced(), out_spec->unreduced_kind());
    out_sharding = std::move(product);
  }
  return contract(x, y, dims, std::nullopt, out_sharding);
}

// "...ij" with the ellipsis spelled out as labels that cannot clash with letters.
std::string expand_ellipsis(const std::string& term, int64_t rank, int64_t ellipsis_rank) {
  const auto at = term.find("...");
  if (at == std::string::npos) return term;
  std::string dims;
  for (int64_t k = 0; k < ellipsis_rank; ++k) dims += static_cast<char>('0' + k);
  return term.substr(0, at) +
         dims.substr(dims.size() - static_cast<std::size_t>(rank - (static_cast<int64_t>(term.size()) - 3))) +
         term.substr(at + 3);
}

}  // namespace

Value einsum(const std::string& spec, const std::vector<Value>& operands,
             const std::optional<PartitionSpec>& out_spec) {
  std::string subscripts;
  for (const char c : spec) {
    if (c != ' ') subscripts += c;
  }
  const auto arrow = subscripts.find("->");
  const std::string inputs = subscripts.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = inputs.find(',', start);
    terms.push_back(inputs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != operands.size()) {
    throw value_error("Number of einsum subscripts, " + std::to_string(terms.size()) +
                      ", must be equal to the number of operands, " + std::to_string(operands.size()) + ".");
  }
  int64_t ellipsis_rank = 0;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    if (terms[k].find("...") != std::string::npos) {
      ellipsis_rank = std::max(ellipsis_rank, ndim_of(operands[k]) - (static_cast<int64_t>(terms[k].size()) - 3));
    }
  }
  for (std::size_t k = 0; k < terms.size(); ++k) {
    terms[k] = expand_ellipsis(terms[k], ndim_of(operands[k]), ellipsis_rank);
    if (static_cast<int64_t>(terms[k].size()) != ndim_of(operands[k])) {
      throw value_error("einsum subscript '" + terms[k] + "' does not match operand " + std::to_string(k) +
                        " of rank " + std::to_string(ndim_of(operands[k])));
    }
    for (std::size_t i = 0; i < terms[k].size(); ++i) {
      if (terms[k].find(terms[k][i], i + 1) != std::string::npos) {
        throw not_implemented_error("jnp.einsum with a label repeated within one operand ('" + terms[k] +
                                    "', a diagonal) is not supported by shardscope");
      }
    }
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = subscripts.substr(arrow + 2);
    if (out.find("...") != std::string::npos) {
      std::string dims;
      for (int64_t k = 0; k < ellipsis_rank; ++k) dims += static_cast<char>('0' + k);
      out = out.substr(0, out.find("...")) + dims + out.substr(out.find("...") + 3);
    }
  } else {
    // Implicit output: the ellipsis dimensions, then the labels that appear once, in alphabetical order.
    std::map<char, int> seen;
    for (const std::string& term : terms) {
      for (const char c : term) ++seen[c];
    }
    for (const auto& [c, n] : seen) {
      if (n == 1 || (c >= '0' && c <= '9')) out += c;
    }
  }
  std::vector<Value> values = operands;
  std::vector<std::string> labels = terms;
  const auto labels_elsewhere = [&](std::size_t skip) {
    std::string text = out;
    for (std::size_t k = 0; k < labels.size(); ++k) {
      if (k != skip) text += labels[k];
    }
    return text;
  };
  for (std::size_t k = 0; k < values.size(); ++k)
    values[k] = sum_private_labels(values[k], labels[k], labels_elsewhere(k));
  // Contract left to right; each step keeps the labels a later operand or the output still needs.
  while (values.size() > 1) {
    std::string needed = out;
    for (std::size_t k = 2; k < labels.size(); ++k) needed += labels[k];
    std::string result_labels;
    const bool last = values.size() == 2;
    std::vector<Value> next_values{contract_pair(values[0], labels[0], values[1], labels[1], needed, result_labels, out,
                                                 last ? out_spec : std::nullopt)};
    std::vector<std::string> next_labels{result_labels};
    for (std::size_t k = 2; k < values.size(); ++k) {
      next_values.push_back(values[k]);
      next_labels.push_back(labels[k]);
    }
    values = std::move(next_values);
    labels = std::move(next_labels);
    values[0] = sum_private_labels(values[0], labels[0], labels_elsewhere(0));
  }
  std::vector<int64_t> perm;
  for (const char c : out) {
    const auto at = labels[0].find(c);
    if (at == std::string::npos) throw value_error("einsum output label '" + std::string(1, c) + "' is in no input");
    perm.push_back(static_cast<int64_t>(at));
  }
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? values[0] : lax::transpose(values[0], perm);
}

Value einsum(const std::string& subscripts, const Value& a, const Value& b) {
  return einsum(subscripts, {a, b}, std::nullopt);
}

}  // namespace shardscope::api::jnp
