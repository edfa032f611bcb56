# %%
import jax
# %% [markdown]
# Text
# %%
# %timeit x
# !pip install jax
print(1)
