"""The demonstration that `make run` loads (`manage.py load_demo`): the real boundaries, the
fictitious network and its accounts (network.py), the transporters, worksites and CTRs
(ctrs.py), the generator's side (generators.py) and the dumping reports and enforcement cases
(fiscalization.py), all fictitious (fixtures/README.md).

Its own app, not part of the apps it fills: a tool above them, as synthetic/ is, so that the
product carries no demonstration data and no product app depends on it.
"""
