/* The Núcleo map: the layers the user switched off stay off when the filter is applied again,
 * and those switched on stay on (a layer such as the final destinations starts off); their
 * names are kept in localStorage, since the filter is a GET form that reloads the page. On a
 * phone the layer list starts collapsed. */
window.CtrMaps.whenMap("mapa", function (map) {
  "use strict";
  var control = map && map.ctrLayerControl;
  if (!control) {
    return;
  }
  var KEY = "ctr-nucleo-camadas-desligadas";
  var KEY_ON = "ctr-nucleo-camadas-ligadas";

  function nameOf(entry) {
    var box = document.createElement("div");
    box.innerHTML = entry.name;
    return box.textContent.trim();
  }

  function load(key) {
    try {
      return JSON.parse(window.localStorage.getItem(key) || "[]");
    } catch (error) {
      return [];
    }
  }

  function save(key, names) {
    try {
      window.localStorage.setItem(key, JSON.stringify(names));
    } catch (error) {
      // Private mode or storage full: the choice lasts for this page only.
    }
  }

  var hidden = load(KEY);
  var shown = load(KEY_ON);
  control._layers.forEach(function (entry) {
    if (!entry.overlay) {
      return;
    }
    var name = nameOf(entry);
    if (hidden.indexOf(name) !== -1 && map.hasLayer(entry.layer)) {
      map.removeLayer(entry.layer);
    } else if (shown.indexOf(name) !== -1 && !map.hasLayer(entry.layer)) {
      map.addLayer(entry.layer);
    }
  });

  function remember() {
    var off = [];
    var on = [];
    control._layers.forEach(function (entry) {
      if (entry.overlay) {
        (map.hasLayer(entry.layer) ? on : off).push(nameOf(entry));
      }
    });
    save(KEY, off);
    save(KEY_ON, on);
  }
  map.on("overlayadd overlayremove", remember);

  // A layer switched back on is drawn on top of the others; put the layers back in the
  // order the map was built (flows under the facilities, the circles above them), so that a
  // tap on a circle still reaches the circle.
  function restack() {
    control._layers.forEach(function (entry) {
      if (entry.overlay && map.hasLayer(entry.layer) && entry.layer.bringToFront) {
        entry.layer.bringToFront();
      }
    });
  }
  map.on("overlayadd", restack);
  restack(); // a layer switched on above, when the page loaded, came on top too

  // The layer list closes on any screen ("Recolher camadas") and opens
  // again from its icon; on a phone it starts closed.
  var container = control.getContainer();
  var close = document.createElement("button");
  close.type = "button";
  close.className = "layers-collapse";
  close.textContent = "Recolher camadas";
  L.DomEvent.disableClickPropagation(close);
  close.addEventListener("click", function (event) {
    event.preventDefault();
    control.collapse();
    var toggle = container.querySelector(".leaflet-control-layers-toggle");
    if (toggle) {
      toggle.focus();
    }
  });
  var list = container.querySelector(".leaflet-control-layers-list");
  (list || container).insertBefore(close, (list || container).firstChild);
  if (window.matchMedia("(max-width: 640px)").matches) {
    control.collapse();
  }
});
