# flax.core.spmd: the logical axis rules in context (nn.logical_axis_rules / set_logical_axis_rules).
import contextlib

_rules = [()]


def get_logical_axis_rules():
    return _rules[-1]


def set_logical_axis_rules(rules):
    _rules[-1] = tuple(rules)


@contextlib.contextmanager
def logical_axis_rules(rules):
    _rules.append(tuple(rules))
    try:
        yield
    finally:
        _rules.pop()


def composite_rules(rule1, rule2):
    if not rule1 and not rule2:
        return ()
    if rule1 and not rule2:
        return rule1
    if rule2 and not rule1:
        return rule2
    first = dict(rule1)
    return tuple(rule1) + tuple((alias, mesh) for alias, mesh in rule2 if alias not in first)
