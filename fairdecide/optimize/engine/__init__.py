"""The engines the routes run: one warm HiGHS wrapper and the restricted-master loops
(scenario cuts, structured sifting, constraint generation, the distributed master's
pass over the units) over unit simplices and coupling rows."""
