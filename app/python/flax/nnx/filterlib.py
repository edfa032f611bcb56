# flax.nnx filters: Variable types, tags, path names, `...`, and their combinations as (path, value) predicates.
import dataclasses
import typing as tp


def to_predicate(filter):
    if isinstance(filter, str):
        return WithTag(filter)
    if isinstance(filter, type):
        return OfType(filter)
    if filter is Ellipsis or filter is True:
        return Everything()
    if filter is None or filter is False:
        return Nothing()
    if isinstance(filter, (list, tuple)):
        return Any(*filter)
    if callable(filter):
        return filter
    raise TypeError(f'Invalid collection filter: {filter!r}. ')


@dataclasses.dataclass(frozen=True)
class OfType:
    type: type

    def __call__(self, path, x):
        return isinstance(x, self.type) or (hasattr(x, 'type') and isinstance(getattr(x, 'type'), type) and
                                            issubclass(x.type, self.type))

    def __repr__(self):
        return f'OfType({self.type!r})'


@dataclasses.dataclass(frozen=True)
class WithTag:
    tag: str

    def __call__(self, path, x):
        return getattr(x, 'tag', None) == self.tag


@dataclasses.dataclass(frozen=True)
class PathContains:
    key: tp.Any

    def __call__(self, path, x):
        return self.key in path


class Any:
    def __init__(self, *filters):
        self.predicates = tuple(to_predicate(f) for f in filters)

    def __call__(self, path, x):
        return any(p(path, x) for p in self.predicates)


class All:
    def __init__(self, *filters):
        self.predicates = tuple(to_predicate(f) for f in filters)

    def __call__(self, path, x):
        return all(p(path, x) for p in self.predicates)


class Not:
    def __init__(self, filter):
        self.predicate = to_predicate(filter)

    def __call__(self, path, x):
        return not self.predicate(path, x)


class Everything:
    def __call__(self, path, x):
        return True


class Nothing:
    def __call__(self, path, x):
        return False
