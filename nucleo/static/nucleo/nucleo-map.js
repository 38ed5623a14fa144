/* The Núcleo map: the layers the user switched off stay off when the filter is applied again
 * (their names are kept in localStorage; the filter is a GET form that reloads the page), and
 * on a phone the layer list starts collapsed. */
(function () {
  "use strict";
  var frame = document.getElementById("mapa");
  var map = frame && typeof L !== "undefined" && window[frame.getAttribute("data-map-var")];
  var control = map && map.ctrLayerControl;
  if (!control) {
    return;
  }
  var KEY = "ctr-nucleo-camadas-desligadas";

  function nameOf(entry) {
    var box = document.createElement("div");
    box.innerHTML = entry.name;
    return box.textContent.trim();
  }

  function load() {
    try {
      return JSON.parse(window.localStorage.getItem(KEY) || "[]");
    } catch (error) {
      return [];
    }
  }

  function save(names) {
    try {
      window.localStorage.setItem(KEY, JSON.stringify(names));
    } catch (error) {
      // Private mode or storage full: the choice lasts for this page only.
    }
  }

  var hidden = load();
  control._layers.forEach(function (entry) {
    if (entry.overlay && hidden.indexOf(nameOf(entry)) !== -1 && map.hasLayer(entry.layer)) {
      map.removeLayer(entry.layer);
    }
  });

  function remember() {
    var off = [];
    control._layers.forEach(function (entry) {
      if (entry.overlay && !map.hasLayer(entry.layer)) {
        off.push(nameOf(entry));
      }
    });
    save(off);
  }
  map.on("overlayadd overlayremove", remember);

  // A layer switched back on is drawn on top of the others; put the layers back in the
  // order the map was built (flows under the facilities, the circles above them), so that a
  // tap on a circle still reaches the circle.
  map.on("overlayadd", function () {
    control._layers.forEach(function (entry) {
      if (entry.overlay && map.hasLayer(entry.layer) && entry.layer.bringToFront) {
        entry.layer.bringToFront();
      }
    });
  });

  if (window.matchMedia("(max-width: 640px)").matches) {
    control.collapse();
  }
})();
