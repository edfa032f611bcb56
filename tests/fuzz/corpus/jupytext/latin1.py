# -*- coding: latin-1 -*-
print("é")
