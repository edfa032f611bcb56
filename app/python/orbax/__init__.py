# orbax: Orbax's namespace package; only orbax.checkpoint's local, single-process StandardCheckpointer is simulated.
