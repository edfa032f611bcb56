x = 1
# %% tags=["a"]
[31mred[0m
