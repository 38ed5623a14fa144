"""A few municipalities of São Paulo for the synthetic data (synthetic/generator.py): the
state's fixture cut down to the codes asked for, loaded as `manage.py generate_synthetic
--municipalities` would."""

import json

from pev_network.boundaries import import_municipalities
from synthetic import generator as synthetic


def load_municipalities(codes: set[str], folder) -> None:
    source = json.loads(synthetic.SP_FIXTURE.read_text())
    source["features"] = [f for f in source["features"] if f["properties"]["id"] in codes]
    path = folder / "municipios.geojson"
    path.write_text(json.dumps(source))
    import_municipalities(path, uf="SP")
