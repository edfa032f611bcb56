# jax.make_jaxpr's objects: Jaxpr (and ClosedJaxpr before JAX 0.11 merged the two), JaxprEqn, Var, Literal and
# Primitive, built from the engine's jaxpr. Printing goes back to the engine's printer, so str() is make_jaxpr's text.
import _shardscope


def _merged():
    # JAX 0.11 made ClosedJaxpr an alias of Jaxpr: make_jaxpr's result is a Jaxpr whose .jaxpr is itself.
    return _shardscope.jax_version_info() >= (0, 11, 0)


def _shaped_array(entry):
    from jax._src.array_methods import ShapedArray
    _, text, repr_text, shape, dtype, weak_type = entry
    return ShapedArray(shape, dtype, weak_type, text, repr_text)


class Var:
    """A jaxpr variable: its type in .aval; printed as JAX prints a Var outside a jaxpr (its Python id)."""
    __slots__ = ('aval', '__weakref__')

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f'Var(id={id(self)}):{str(self.aval).lstrip("~")}'


class Literal:
    """A constant written into an equation."""
    __slots__ = ('val', 'aval')

    def __init__(self, val, aval):
        self.val, self.aval = val, aval

    def __repr__(self):
        return f'Literal({self.val})'


class Primitive:
    """An equation's operation: its name, and bind() to apply it to values (jax.extend-style interpreters)."""
    __slots__ = ('name',)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, Primitive) and other.name == self.name

    def __hash__(self):
        return hash(('Primitive', self.name))

    def bind(self, *args, **params):
        inner = next((params[k] for k in _CALL_JAXPR_PARAMS if k in params), None) \
            if self.name in _CALL_PRIMITIVES else None
        if inner is not None:
            # A call primitive (jit, a checkpoint, a custom derivative's primal): evaluate its jaxpr on the values.
            closed = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
            consts = inner.consts if isinstance(inner, ClosedJaxpr) else getattr(inner, '_consts', [])
            return eval_jaxpr(closed, consts, *args)
        if any(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in params.values()):
            raise NotImplementedError(f'binding {self.name} with a jaxpr parameter from Python is not supported by '
                                      'shardscope')
        outs = _shardscope.bind(self.name, list(args), params)
        return outs[0] if len(outs) == 1 else outs

    def def_impl(self, impl):
        raise NotImplementedError(f'defining new primitives ({self.name}.def_impl) is not supported by shardscope')

    def_abstract_eval = def_effectful_abstract_eval = def_impl


# Primitives that call a jaxpr once on their operands, and the param holding it.
_CALL_PRIMITIVES = frozenset({'jit', 'pjit', 'closed_call', 'core_call', 'remat', 'remat2', 'checkpoint',
                              'custom_jvp_call', 'custom_vjp_call', 'custom_vjp_call_jaxpr'})
_CALL_JAXPR_PARAMS = ('jaxpr', 'call_jaxpr', 'fun_jaxpr')


def eval_jaxpr(jaxpr, consts, *args, propagate_source_info=True):
    """Runs a jaxpr's equations on values: jax.core.eval_jaxpr. Each equation binds its primitive."""
    env = {}

    def read(v):
        return v.val if isinstance(v, Literal) else env[v]
    if len(args) != len(jaxpr.invars):
        raise TypeError(f'eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}')
    for v, value in zip(jaxpr.constvars, consts):
        env[v] = value
    for v, value in zip(jaxpr.invars, args):
        env[v] = value
    for eqn in jaxpr.eqns:
        out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **eqn.params)
        outs = out if isinstance(out, (list, tuple)) else [out]
        for v, value in zip(eqn.outvars, outs):
            env[v] = value
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed, *args):
    """The function a closed jaxpr computes (jax.extend.core.jaxpr_as_fun), partially applied when given args."""
    import functools
    jaxpr = closed.jaxpr
    consts = closed.consts

    def fun(*values):
        return eval_jaxpr(jaxpr, consts, *values)
    return functools.partial(fun, *args) if args else fun


class JaxprEqn:
    """One equation: outvars = primitive[params] invars."""
    __slots__ = ('invars', 'outvars', 'primitive', 'params', 'effects', 'source_info', '_handle', '_index')

    def __init__(self, invars, outvars, primitive, params, handle, index):
        self.invars, self.outvars, self.primitive, self.params = invars, outvars, primitive, params
        self.effects, self.source_info = set(), None
        self._handle, self._index = handle, index

    def __repr__(self):
        return self._handle.eqn_text(self._index).rstrip()


class _Builder:
    """Turns the engine's structure into objects, one Var object per engine variable."""

    def __init__(self):
        self._vars = {}

    def var(self, entry):
        found = self._vars.get(entry[0])
        if found is None:
            found = self._vars[entry[0]] = Var(_shaped_array(entry))
        return found

    def atom(self, entry):
        if entry[0] == 'var':
            return self.var(entry[1])
        return Literal(entry[1], _shaped_array(entry[2]))

    def param(self, value):
        if isinstance(value, _shardscope.JaxprHandle):
            return jaxpr_object(value, [], self)
        if isinstance(value, tuple):
            return tuple(self.param(v) for v in value)
        if isinstance(value, list):
            return [self.param(v) for v in value]
        return value

    def jaxpr(self, handle):
        shape = handle.structure()
        constvars = [self.var(e) for e in shape['constvars']]
        invars = [self.var(e) for e in shape['invars']]
        outvars = [self.atom(e) for e in shape['outvars']]
        eqns = []
        for index, (name, params, inputs, outputs) in enumerate(shape['eqns']):
            eqns.append(JaxprEqn([self.atom(e) for e in inputs], [self.var(e) for e in outputs], Primitive(name),
                                 {k: self.param(v) for k, v in params.items()}, handle, index))
        return constvars, invars, outvars, eqns


class Jaxpr:
    """A jaxpr: constvars, invars, equations and outvars. From JAX 0.11 it also holds its consts (ClosedJaxpr)."""

    def __init__(self, handle, constvars, invars, outvars, eqns, consts):
        self._handle = handle
        self.constvars, self.invars, self.outvars, self.eqns = constvars, invars, outvars, eqns
        self._consts = list(consts)
        self.effects = set()
        self.debug_info = None

    def __str__(self):
        return self._handle.text()

    __repr__ = __str__

    def pretty_print(self, **_):
        return self._handle.text()

    # The closed-jaxpr face JAX 0.11 gave Jaxpr itself.
    def __getattr__(self, name):
        if _merged() and name in _CLOSED_ATTRIBUTES:
            return _CLOSED_ATTRIBUTES[name](self)
        raise AttributeError(f"'Jaxpr' object has no attribute '{name}'")


class ClosedJaxpr:
    """A jaxpr with the values of its constvars (JAX before 0.11)."""

    def __init__(self, jaxpr, consts):
        self.jaxpr, self.consts = jaxpr, list(consts)

    @property
    def literals(self):
        return self.consts

    @property
    def eqns(self):
        return self.jaxpr.eqns

    @property
    def in_avals(self):
        return [v.aval for v in self.jaxpr.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.jaxpr.outvars]

    @property
    def effects(self):
        return self.jaxpr.effects

    def __str__(self):
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **kwargs):
        return self.jaxpr.pretty_print(**kwargs)


_CLOSED_ATTRIBUTES = {
    'jaxpr': lambda j: j,
    'consts': lambda j: j._consts,
    'literals': lambda j: j._consts,
    'num_consts': lambda j: len(j.constvars),
    'in_avals': lambda j: [v.aval for v in j.invars],
    'out_avals': lambda j: [v.aval for v in j.outvars],
    'is_closed': lambda j: len(j._consts) == len(j.constvars),
}


def jaxpr_object(handle, consts, builder=None):
    """make_jaxpr's result for the profile: a Jaxpr (0.11 on), else a ClosedJaxpr around an open Jaxpr."""
    builder = builder or _Builder()
    constvars, invars, outvars, eqns = builder.jaxpr(handle)
    if _merged():
        return Jaxpr(handle, constvars, invars, outvars, eqns, consts)
    return ClosedJaxpr(Jaxpr(handle, constvars, invars, outvars, eqns, ()), consts)
