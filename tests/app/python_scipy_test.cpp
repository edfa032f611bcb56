// jax.scipy from Python: special functions and distributions against float64 formulas, JAX's jaxprs and custom
// derivatives, JAX's argument errors; numpy scalars staged as literals. (SciPy itself is not imported: its
// extension modules crash the test host when the embedded interpreter finalizes.)
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::run_cell;

namespace {

constexpr const char* kPrelude =
    "import math\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\nimport jax.scipy as jsp\n"
    "x64 = np.array([-3.5, -1.25, -0.0625, 0.0, 0.5, 2.0, 4.75])\n"
    "x = jnp.asarray(x64, jnp.float32)\n"
    "def close(got, want, rtol=2e-6, atol=1e-6):\n"
    "    return bool(np.allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol))\n"
    // float64 references: the textbook formulas.
    "erfc = np.vectorize(math.erfc)\nlgamma = np.vectorize(math.lgamma)\n"
    "def norm_logpdf(v, m=0.0, s=1.0): return -0.5 * ((v - m) / s) ** 2 - np.log(s) - 0.5 * np.log(2 * np.pi)\n"
    "def norm_cdf(v, m=0.0, s=1.0): return 0.5 * erfc(-(v - m) / (s * np.sqrt(2)))\n"
    "def expit(v): return 1 / (1 + np.exp(-v))\n";

}  // namespace

TEST_CASE("jax.scipy.stats densities equal their float64 formulas") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("st = jsp.stats\n"
                "print(close(st.norm.logpdf(x, 0.5, 2.0), norm_logpdf(x64, 0.5, 2.0)),\n"
                "      close(st.norm.pdf(x), np.exp(norm_logpdf(x64))),\n"
                "      close(st.norm.cdf(x, 1.0, 3.0), norm_cdf(x64, 1.0, 3.0)),\n"
                "      close(st.norm.logcdf(x), np.log(norm_cdf(x64))),\n"
                "      close(st.norm.sf(x), norm_cdf(-x64)),\n"
                "      close(st.expon.logpdf(x, -1.0, 2.0), np.where(x64 < -1, -np.inf, -(x64 + 1) / 2 - np.log(2))),\n"
                "      close(st.expon.cdf(x), np.where(x64 < 0, 0, 1 - np.exp(-x64))),\n"
                "      close(st.laplace.logpdf(x, 0.25), -np.abs(x64 - 0.25) - np.log(2)),\n"
                "      close(st.laplace.cdf(x), np.where(x64 <= 0, 0.5 * np.exp(x64), 1 - 0.5 * np.exp(-x64))),\n"
                "      close(st.logistic.logpdf(x), -x64 - 2 * np.log1p(np.exp(-x64))),\n"
                "      close(st.logistic.cdf(x), expit(x64)),\n"
                "      close(st.uniform.logpdf(x, -1.0, 3.0), np.where((x64 < -1) | (x64 > 2), -np.inf, -np.log(3))),\n"
                "      close(st.uniform.cdf(x, -1.0, 3.0), np.clip((x64 + 1) / 3, 0, 1)))") ==
        "True True True True True True True True True True True True True\n");
  CHECK(printed("k = jnp.array([0.0, 1.0, 1.0, 3.0, 5.0])\n"
                "print(close(jsp.stats.bernoulli.logpmf(k[:3], 0.3), np.log([0.7, 0.3, 0.3])),\n"
                "      close(jsp.stats.bernoulli.pmf(jnp.array([0., 1., 2.]), 0.3), [0.7, 0.3, 0.0]),\n"
                "      close(jsp.stats.poisson.logpmf(k, 2.5),\n"
                "            np.array([0, 1, 1, 3, 5]) * np.log(2.5) - 2.5 - lgamma(np.array([1.0, 2, 2, 4, 6]))),\n"
                "      close(jsp.stats.multivariate_normal.logpdf(x[:3], jnp.ones(3), 2.0),\n"
                "            -0.5 * np.sum((x64[:3] - 1) ** 2) / 2.0 - 1.5 * np.log(2 * np.pi * 2.0)))") ==
        "True True True True\n");
  // JAX's operation sequence, its constants staged as literals.
  CHECK(printed("print(jax.make_jaxpr(jsp.stats.norm.logpdf)(x[:3]))") ==
        "{ lambda ; a:f32[3]. let\n"
        "    b:f32[] = square 1.0:f32[]\n"
        "    c:f32[] = mul 6.2831854820251465:f32[] b\n"
        "    d:f32[] = log c\n"
        "    e:f32[3] = sub a 0.0:f32[]\n"
        "    f:f32[3] = square e\n"
        "    g:f32[3] = div f b\n"
        "    h:f32[3] = add d g\n"
        "    i:f32[3] = div h -2.0:f32[]\n"
        "  in (i,) }\n");
  const auto bad = run_cell("jsp.stats.norm.logpdf([1.0, 2.0])");
  CHECK(bad.error.find("TypeError: norm.logpdf requires ndarray or scalar arguments, got <class 'list'> at position "
                       "0.") != std::string::npos);
  CHECK(run_cell("jsp.stats.gamma").error.find("NotImplementedError: jax.scipy.stats.gamma") != std::string::npos);
}

TEST_CASE("jax.scipy.special functions equal their float64 formulas, with JAX's derivatives") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("sp = jsp.special\n"
                "p = jnp.array([0.125, 0.5, 0.75])\n"
                "print(close(sp.expit(x), expit(x64)),\n"
                "      close(sp.logit(p), np.log(np.array([1 / 7, 1.0, 3.0]))),\n"
                "      close(sp.logsumexp(x), np.log(np.sum(np.exp(x64)))),\n"
                "      close(sp.logsumexp(x, b=jnp.linspace(0.5, 2.0, 7)),\n"
                "            np.log(np.sum(np.linspace(0.5, 2.0, 7) * np.exp(x64)))),\n"
                "      close(sp.xlogy(jnp.array([0.0, 2.0]), jnp.array([0.0, 3.0])), [0.0, 2 * np.log(3.0)]),\n"
                "      close(sp.xlog1py(jnp.array([0.0, 2.0]), jnp.array([-1.0, 3.0])), [0.0, 2 * np.log(4.0)]),\n"
                "      close(sp.entr(jnp.array([0.0, 0.5, 1.0])), [0.0, 0.5 * np.log(2), 0.0]),\n"
                "      close(sp.gammaln(jnp.array([0.5, 3.0, 7.5])), lgamma(np.array([0.5, 3.0, 7.5])), 1e-5),\n"
                "      close(sp.ndtr(x), norm_cdf(x64)),\n"
                "      close(sp.log_ndtr(x), np.log(norm_cdf(x64))),\n"
                "      close(sp.log_ndtr(jnp.array([-30.0])), np.log(norm_cdf(np.array([-30.0]))), 1e-5))") ==
        "True True True True True True True True True True True\n");
  CHECK(printed("out, sign = jsp.special.logsumexp(jnp.array([1.0, 2.0]), b=jnp.array([1.0, -2.0]), return_sign=True)\n"
                "print(close(out, np.log(2 * np.e ** 2 - np.e)), sign)") == "True -1.0\n");
  // Derivatives: the custom rules of logit, log_ndtr and xlogy (whose x-derivative at y = 0 is log 0).
  CHECK(printed("print(close(jax.grad(jsp.special.logit)(0.25), 1 / (0.25 * 0.75)),\n"
                "      close(jax.vmap(jax.grad(jsp.special.log_ndtr))(x),\n"
                "            np.exp(norm_logpdf(x64)) / norm_cdf(x64), 1e-5),\n"
                "      jax.grad(jsp.special.xlogy)(0.0, 0.0),\n"
                "      close(jax.grad(lambda v: jsp.stats.norm.logpdf(v, 1.0, 2.0).sum())(x), -(x64 - 1.0) / 4.0))") ==
        "True True -inf True\n");
}

TEST_CASE("numpy scalars are literals in jaxprs and arrays outside them") {
  REQUIRE(run_cell(kPrelude).ok());
  CHECK(printed("print(jax.make_jaxpr(lambda v: v * np.float32(2.0) + np.array(1.5, np.float32))(jnp.ones(2)))") ==
        "{ lambda ; a:f32[2]. let\n    b:f32[2] = mul a 2.0:f32[]\n    c:f32[2] = add b 1.5:f32[]\n  in (c,) }\n");
  CHECK(printed("print(jax.make_jaxpr(lambda v: v + np.int32(3))(jnp.ones(2, jnp.int32)))") ==
        "{ lambda ; a:i32[2]. let b:i32[2] = add a 3:i32[] in (b,) }\n");
  CHECK(
      printed(
          "print(repr(jax.device_put(np.float32(2.5))), jax.jit(lambda a, b: a * b)(np.float32(2.0), jnp.ones(2)))") ==
      "Array(2.5, dtype=float32) [2. 2.]\n");
}
