# flax.linen.Sequential: callables applied in order, a tuple output spread as the next one's positional arguments
# and a dict as its keywords; modules handed in from outside are adopted as layers_<position>.
import collections.abc
import typing

from flax.linen.module import Module, compact


class Sequential(Module):
    layers: typing.Sequence[typing.Callable[..., typing.Any]]

    def __post_init__(self):
        if not isinstance(self.layers, collections.abc.Sequence):
            raise ValueError(f"'layers' must be a sequence, got '{type(self.layers).__name__}'.")
        super().__post_init__()

    def setup(self):
        # Flax binds modules held in a field to the module holding them, named after the field and their position
        # in it (Dense, relu, Dense -> layers_0, layers_2). Those made at top level (no parent) are cloned, one clone
        # per instance so that a layer listed twice shares its params; those made in a setup() and not yet named
        # are taken over; those already named where they were made (in a compact method) stay there.
        adopted = {}
        layers = []
        for i, layer in enumerate(self.layers):
            if isinstance(layer, Module) and layer.scope is None:
                if layer.parent is None:
                    if id(layer) not in adopted:
                        adopted[id(layer)] = layer.clone(parent=self, name=f'layers_{i}')
                    layer = adopted[id(layer)]
                elif isinstance(layer.parent, Module) and layer.name is None:
                    layer._attach(self, f'layers_{i}')
            layers.append(layer)
        object.__setattr__(self, 'layers', tuple(layers))

    @compact
    def __call__(self, *args, **kwargs):
        if not self.layers:
            raise ValueError(f'Empty Sequential module {self.name}.')
        outputs = self.layers[0](*args, **kwargs)
        for layer in self.layers[1:]:
            if isinstance(outputs, tuple):
                outputs = layer(*outputs)
            elif isinstance(outputs, dict):
                outputs = layer(**outputs)
            else:
                outputs = layer(outputs)
        return outputs
