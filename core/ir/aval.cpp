// The short string of abstract values, as jax.typeof and jaxprs print them.
#include "ir/aval.h"

namespace shardscope {
namespace {
std::string axes_text(const std::vector<std::string>& axes) {
  if (axes.size() == 1) return axes[0];
  return "(" + join(axes, ",") + ")";
}
}  // namespace

std::string Aval::str_short(bool short_dtypes) const {
  std::string out(short_dtypes ? dtype_short_name(dtype) : dtype_name(dtype));
  if (memory == MemorySpace::kHost) out += "<host>";
  if (memory == MemorySpace::kAny) out += "<any>";
  std::vector<std::string> dims;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    std::string dim = std::to_string(shape[d]);
    if (d < dim_axes.size() && !dim_axes[d].empty()) dim += "@" + axes_text(dim_axes[d]);
    dims.push_back(dim);
  }
  out += "[" + join(dims, ",") + "]";
  std::vector<std::string> annotations;
  if (!varying.empty()) annotations.push_back("V:" + axes_text(varying));
  if (!unreduced.empty()) annotations.push_back("U:" + axes_text(unreduced));
  if (!reduced.empty()) annotations.push_back("R:" + axes_text(reduced));
  if (!annotations.empty()) out += "{" + join(annotations, ", ") + "}";
  return out;
}

double aval_elements(const Aval& aval) {
  double n = 1;
  for (const int64_t d : aval.shape) n *= static_cast<double>(d);
  return n;
}

double aval_bytes(const Aval& aval) { return aval_elements(aval) * static_cast<double>(dtype_size(aval.dtype)); }

}  // namespace shardscope
