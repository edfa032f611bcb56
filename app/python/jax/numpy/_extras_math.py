# jax.numpy elementwise extras (rounding, angles, float and bit helpers, gcd/lcm) over the engine's jnp and primitives.
import operator as _operator

import numpy as _np

from jax.numpy._extras_util import (jnp as _jnp, bind as _bind, promote as _promote, promote_inexact as _inexact,
                                    is_inexact as _is_inexact, is_integer as _is_integer, is_unsigned as _is_unsigned,
                                    is_bool as _is_bool, check_not_complex as _check_not_complex, convert as _convert,
                                    asarray as _asarray)


def _round_half_even(x):
    return _bind('round', x, rounding_method=1)


def round(a, decimals=0, out=None):  # noqa: A001 (numpy's name)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    j = _jnp()
    a = _asarray(a)
    _check_not_complex(a, 'round')
    decimals = _operator.index(decimals)
    if _is_integer(a.dtype) or _is_bool(a.dtype):
        if decimals < 0:
            raise NotImplementedError('integer np.round not implemented for decimals < 0')
        return a
    if decimals == 0:
        return _round_half_even(a)
    # Scaling by 10**decimals in the array's dtype, rounding half to even, and scaling back (as JAX does).
    factor = 10.0 ** decimals
    return _round_half_even(a * factor) / factor


around = round


def rint(x, /):
    x, = _inexact(x)
    return _round_half_even(x)


def trunc(x, /):
    j = _jnp()
    x = _asarray(x)
    if not _is_inexact(x.dtype):
        return x
    return j.where(x < 0, j.ceil(x), j.floor(x))


def log2(x, /):
    j = _jnp()
    x, = _inexact(x)
    return j.log(x) / j.log(_convert(2, x.dtype, True))


def log10(x, /):
    j = _jnp()
    x, = _inexact(x)
    return j.log(x) / j.log(_convert(10, x.dtype, True))


def invert(x, /):
    # The 'not' primitive: bitwise on integers, logical on booleans.
    x = _asarray(x)
    if _is_inexact(x.dtype):
        raise TypeError(f'not does not accept dtype {x.dtype}. Accepted dtypes are subtypes of integer, bool.')
    return _bind('not', x)


bitwise_not = invert


def bitwise_xor(x1, x2, /):
    x1, x2 = _promote(x1, x2)
    return _bind('xor', x1, x2)


def real(val, /):
    _check_not_complex(val, 'real')
    return _asarray(val)


def imag(val, /):
    _check_not_complex(val, 'imag')
    return _jnp().zeros_like(val)


def conjugate(x, /):
    _check_not_complex(x, 'conjugate')
    return _asarray(x)


def conj(x, /):
    _check_not_complex(x, 'conj')
    return _asarray(x)


def angle(z, deg=False):
    _check_not_complex(z, 'angle')
    j = _jnp()
    # A real number's angle is that of (x, 0): 0 or pi. JAX takes atan2 in a floating dtype.
    re, = _inexact(z)
    result = j.arctan2(j.zeros_like(re), re)
    return degrees(result) if deg else result


def isposinf(x, /):
    j = _jnp()
    x = _asarray(x)
    return j.isinf(x) & (x > 0) if _is_inexact(x.dtype) else j.zeros_like(x, bool)


def isneginf(x, /):
    j = _jnp()
    x = _asarray(x)
    return j.isinf(x) & (x < 0) if _is_inexact(x.dtype) else j.zeros_like(x, bool)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    _check_not_complex(x, 'nan_to_num')
    j = _jnp()
    x = _asarray(x)
    if not _is_inexact(x.dtype):
        return x
    info = j.finfo(x.dtype) if str(x.dtype) != 'bfloat16' else None
    big = info.max if info is not None else 3.3895313892515355e+38
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = j.where(j.isnan(x), j.asarray(nan, x.dtype), x)
    out = j.where(isposinf(out), j.asarray(posinf, x.dtype), out)
    return j.where(isneginf(out), j.asarray(neginf, x.dtype), out)


def sinc(x, /):
    j = _jnp()
    x, = _inexact(x)
    at_zero = x == 0
    # A safe argument keeps sin(t)/t (and its gradient) finite where the answer is the limit, 1.
    t = j.where(at_zero, j.ones_like(x), _np.pi * x)
    return j.where(at_zero, j.ones_like(x), j.sin(t) / t)


def hypot(x1, x2, /):
    j = _jnp()
    x1, x2 = _inexact(x1, x2)
    x1, x2 = j.abs(x1), j.abs(x2)
    infinite = j.isinf(x1) | j.isinf(x2)
    big, small = j.maximum(x1, x2), j.minimum(x1, x2)
    # Scaling by the larger magnitude keeps the square from overflowing.
    safe = j.where(big == 0, j.ones_like(big), big)
    out = j.where(big == 0, big, big * j.sqrt(1 + j.square(small / safe)))
    return j.where(infinite, j.asarray(_np.inf, out.dtype), out)


def deg2rad(x, /):
    x, = _inexact(x)
    return x * (_np.pi / 180)


def rad2deg(x, /):
    x, = _inexact(x)
    return x * (180 / _np.pi)


radians, degrees = deg2rad, rad2deg


def fabs(x, /):
    x, = _inexact(x)
    return _jnp().abs(x)


def _numeric(name, *args):
    args = _promote(*args)
    if _is_bool(args[0].dtype):
        # JAX's numeric promotion makes bool operands int32 for arithmetic-only ufuncs.
        from jax._src.scalar_types import int32
        args = [a.astype(int32) for a in args]
    return args


def fmod(x1, x2, /):
    j = _jnp()
    x1, x2 = _numeric('fmod', x1, x2)
    if _is_integer(x1.dtype):
        # XLA's integer remainder by zero is undefined: JAX divides by one there.
        x2 = j.where(x2 == 0, j.ones_like(x2), x2)
    return _bind('rem', x1, x2)


def divmod(x1, x2, /):  # noqa: A001 (numpy's name)
    j = _jnp()
    x1, x2 = _numeric('divmod', x1, x2)
    if _is_integer(x1.dtype):
        return j.floor_divide(x1, x2), j.remainder(x1, x2)
    mod = fmod(x1, x2)
    div = (x1 - mod) / x2
    # fmod truncates toward zero; floor division moves the remainder to the divisor's sign.
    shift = (mod != 0) & (j.sign(x2) != j.sign(mod))
    mod = j.where(shift, mod + x2, mod)
    div = j.where(shift, div - 1, div)
    return j.round(div), mod


def float_power(x1, x2, /):
    x1, x2 = _inexact(x1, x2)
    return _jnp().power(x1, x2)


def heaviside(x1, x2, /):
    j = _jnp()
    x1, x2 = _inexact(x1, x2)
    zero = j.zeros_like(x1)
    return j.where(x1 < 0, zero, j.where(x1 > 0, j.ones_like(x1), x2))


def fmax(x1, x2, /):
    j = _jnp()
    x1, x2 = _promote(x1, x2)
    return j.where((x1 > x2) | j.isnan(x2), x1, x2)


def fmin(x1, x2, /):
    j = _jnp()
    x1, x2 = _promote(x1, x2)
    return j.where((x1 < x2) | j.isnan(x2), x1, x2)


def _integers(name, *args):
    args = _promote(*args)
    if not _is_integer(args[0].dtype):
        raise ValueError(f'Arguments to jax.numpy.{name} must be integers.')
    return args


def gcd(x1, x2, /):
    j = _jnp()
    from jax import lax
    x1, x2 = _integers('gcd', x1, x2)
    x1, x2 = j.broadcast_to(j.abs(x1), _broadcast(x1, x2)), j.broadcast_to(j.abs(x2), _broadcast(x1, x2))

    # Euclid's algorithm on every element at once, until every remainder is zero.
    def keep_going(pair):
        return j.any(pair[1] != 0)

    def step(pair):
        a, b = pair
        nonzero = b != 0
        safe = j.where(nonzero, b, j.ones_like(b))
        return j.where(nonzero, b, a), j.where(nonzero, j.remainder(a, safe), j.zeros_like(b))
    return lax.while_loop(keep_going, step, (x1, x2))[0]


def lcm(x1, x2, /):
    j = _jnp()
    x1, x2 = _integers('lcm', x1, x2)
    d = gcd(x1, x2)
    safe = j.where(d == 0, j.ones_like(d), d)
    return j.where(d == 0, j.zeros_like(d), j.abs(x1 * j.floor_divide(x2, safe)))


def _broadcast(*arrays):
    from jax.numpy._extras_shape import broadcast_shapes
    return broadcast_shapes(*(_np.shape(a) if not hasattr(a, 'shape') else tuple(a.shape) for a in arrays))


def _shift_operands(name, x1, x2):
    x1, x2 = _numeric(name, x1, x2)
    if not _is_integer(x1.dtype):
        raise TypeError(f'{name} does not accept dtype {x1.dtype}. Accepted dtypes are subtypes of integer.')
    if x1.ndim == 0 or x2.ndim == 0 or tuple(x1.shape) == tuple(x2.shape):
        # A scalar operand broadcasts inside the primitive, as a literal does in JAX's jaxprs.
        return x1, x2
    shape = _broadcast(x1, x2)
    j = _jnp()
    return j.broadcast_to(x1, shape), j.broadcast_to(x2, shape)


def left_shift(x, y, /):
    return _bind('shift_left', *_shift_operands('shift_left', x, y))


def right_shift(x1, x2, /):
    x1, x2 = _shift_operands('shift_right', x1, x2)
    # Unsigned integers shift in zeros; signed ones copy the sign bit, as JAX picks per dtype.
    return _bind('shift_right_logical' if _is_unsigned(x1.dtype) else 'shift_right_arithmetic', x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def signbit(x, /):
    j = _jnp()
    x = _asarray(x)
    if _is_bool(x.dtype):
        return j.zeros_like(x, bool)
    if not _is_inexact(x.dtype):
        return x < 0
    # Without a bitcast, -0.0 shows its sign through 1/x = -inf (a negative NaN reads as positive here).
    return (x < 0) | ((x == 0) & (1 / x < 0))


def copysign(x1, x2, /):
    j = _jnp()
    x1, x2 = _inexact(x1, x2)
    magnitude = j.abs(x1)
    return j.where(signbit(x2), -magnitude, magnitude)


def ldexp(x1, x2, /):
    j = _jnp()
    x2 = j.asarray(x2)
    if not (_is_integer(x2.dtype) or _is_bool(x2.dtype)):
        raise ValueError(f'ldexp: second argument must be an integer array, got dtype {x2.dtype}')
    x1, = _inexact(x1)
    # Two halves of the exponent keep 2**e finite wherever x1 * 2**e is.
    half = j.floor_divide(x2, 2)
    return x1 * j.exp2(half.astype(x1.dtype)) * j.exp2((x2 - half).astype(x1.dtype))


_EXPONENT_INTS = {2: 'int16', 4: 'int32', 8: 'int64'}


def frexp(x, /):
    _check_not_complex(x, 'frexp')
    j = _jnp()
    x, = _inexact(x)
    exp_dtype = _EXPONENT_INTS[_np.dtype('float32' if str(x.dtype) == 'bfloat16' else x.dtype).itemsize]
    special = (x == 0) | j.isinf(x) | j.isnan(x)
    safe = j.where(special, j.ones_like(x), x)
    exponent = j.floor(j.log2(j.abs(safe))) + 1
    mantissa = safe / j.exp2(exponent)
    # log2 may be off by one near powers of two: bring |mantissa| into [0.5, 1).
    too_big = j.abs(mantissa) >= 1
    mantissa, exponent = j.where(too_big, mantissa / 2, mantissa), j.where(too_big, exponent + 1, exponent)
    too_small = j.abs(mantissa) < 0.5
    mantissa, exponent = j.where(too_small, mantissa * 2, mantissa), j.where(too_small, exponent - 1, exponent)
    return j.where(special, x, mantissa), j.where(special, 0, exponent).astype(exp_dtype)


def modf(x, /, out=None):
    j = _jnp()
    x, = _inexact(x)
    whole = j.where(x >= 0, j.floor(x), j.ceil(x))
    return x - whole, whole


def logaddexp2(x1, x2, /):
    j = _jnp()
    x1, x2 = _inexact(x1, x2)
    top = j.maximum(x1, x2)
    delta = x1 - x2
    # Equal infinities give a NaN difference: their sum is the answer there.
    return j.where(j.isnan(delta), x1 + x2, top + j.log1p(j.exp2(-j.abs(delta))) / _np.log(2))
