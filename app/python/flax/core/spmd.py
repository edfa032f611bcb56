# flax.core.spmd: which logical-axis rules are in force (nn.logical_axis_rules / set_logical_axis_rules).
from contextlib import contextmanager

# A stack so that leaving a nested `with` restores the enclosing rules; set_logical_axis_rules rewrites the top.
_rule_frames = [()]


def get_logical_axis_rules():
    return _rule_frames[-1]


def set_logical_axis_rules(rules):
    _rule_frames[len(_rule_frames) - 1] = tuple(rules)


@contextmanager
def logical_axis_rules(rules):
    depth = len(_rule_frames)
    _rule_frames.append(tuple(rules))
    try:
        yield
    finally:
        del _rule_frames[depth:]


def composite_rules(rule1, rule2):
    if not (rule1 and rule2):
        # One side empty: the other is returned as given (not copied), and () when both are.
        return rule1 or rule2 or ()
    # rule1 wins: a logical name it already maps is not remapped by rule2.
    claimed = {logical for logical, _ in rule1}
    return tuple(rule1) + tuple((logical, axes) for logical, axes in rule2 if logical not in claimed)
