/* "Cadastrar obra": the worksite on the map, as a point (a click or tap fills the latitude and
 * longitude) or as its contour (a click or tap per corner; "Fechar contorno", or a tap on the
 * first corner, closes it; "Desfazer último canto" takes the last one back). The contour goes
 * to the hidden field #id_area as GeoJSON; a page sent back with errors draws it again.
 * Helpers: maps/point-input.js (CtrPointInput). Without JavaScript the point is typed. */
window.CtrPointInput.whenPageMap(function (map) {
  "use strict";

  var input = window.CtrPointInput;
  var lat = document.getElementById("id_location_lat");
  var lon = document.getElementById("id_location_lon");
  var area = document.getElementById("id_area");
  if (!map || !lat || !lon || !area) {
    return;
  }
  var frame = document.getElementById("mapa");
  var tools = document.getElementById("ferramentas-contorno");
  var pointFields = document.getElementById("campos-ponto");
  var undoButton = document.getElementById("desfazer-vertice");
  var closeButton = document.getElementById("fechar-contorno");
  var clearButton = document.getElementById("apagar-contorno");
  var say = input.statusLine(document.getElementById("mapa-status"));
  var COLOUR = "#0072B2";
  var pointStyle = { radius: 9, color: "#ffffff", weight: 3, fillColor: COLOUR, fillOpacity: 1 };
  var markPoint = input.movingMarker(map, pointStyle);
  var pointMarker = null;

  var vertices = []; // L.LatLng, in the order tapped
  var closed = false;
  var drawing = L.layerGroup().addTo(map);

  if (window.ResizeObserver) {
    new ResizeObserver(function () {
      map.invalidateSize({ animate: false });
    }).observe(frame);
  }
  input.collapseLayersOnPhone(map, false);

  function shape() {
    var checked = document.querySelector("input[name=shape]:checked");
    return checked ? checked.value : "point";
  }

  function showShape() {
    var polygon = shape() === "polygon";
    tools.hidden = !polygon;
    pointFields.hidden = polygon;
    if (pointMarker) {
      pointMarker.setStyle({ opacity: polygon ? 0 : 1, fillOpacity: polygon ? 0 : 1 });
    }
    drawing.eachLayer(function (layer) {
      layer.setStyle({ opacity: polygon ? 1 : 0.35, fillOpacity: polygon ? 0.2 : 0.05 });
    });
    // Two quick taps on two corners must not zoom the map.
    if (polygon) {
      map.doubleClickZoom.disable();
    } else {
      map.doubleClickZoom.enable();
    }
  }

  function cornerWord(n) {
    return n === 1 ? "1 canto" : n + " cantos";
  }

  function writeArea() {
    if (!closed || vertices.length < 3) {
      area.value = "";
      return;
    }
    var ring = vertices.map(function (v) {
      return [Number(v.lng.toFixed(7)), Number(v.lat.toFixed(7))];
    });
    ring.push(ring[0]);
    area.value = JSON.stringify({ type: "Polygon", coordinates: [ring] });
  }

  function redraw() {
    drawing.clearLayers();
    if (closed) {
      L.polygon(vertices, { color: COLOUR, weight: 3, fillColor: COLOUR, fillOpacity: 0.2 })
        .addTo(drawing);
    } else if (vertices.length > 1) {
      L.polyline(vertices, { color: COLOUR, weight: 3, dashArray: "6 6", interactive: false })
        .addTo(drawing);
    }
    vertices.forEach(function (v, i) {
      var first = i === 0 && !closed;
      var corner = L.circleMarker(v, {
        radius: first ? 10 : 6,
        color: "#ffffff",
        weight: 2,
        fillColor: COLOUR,
        fillOpacity: 1,
        interactive: first,
        className: first ? "worksite-vertex-first" : "",
      }).addTo(drawing);
      if (first) {
        corner.bindTooltip("Toque aqui para fechar", { direction: "top", offset: [0, -10] });
        corner.on("click", function (event) {
          L.DomEvent.stopPropagation(event);
          close();
        });
      }
    });
    undoButton.disabled = vertices.length === 0;
    closeButton.disabled = closed || vertices.length < 3;
    clearButton.disabled = vertices.length === 0;
    writeArea();
  }

  function close() {
    if (vertices.length < 3) {
      say("O contorno precisa de pelo menos 3 cantos; tem " + cornerWord(vertices.length) + ".");
      return;
    }
    closed = true;
    redraw();
    say("Contorno fechado com " + cornerWord(vertices.length) + ".");
  }

  function choosePoint(latlng) {
    pointMarker = markPoint(input.fill(lon, lat, latlng));
    say("Obra marcada: latitude " + lat.value + ", longitude " + lon.value + ".");
  }

  map.on("click", function (event) {
    if (shape() !== "polygon") {
      choosePoint(event.latlng);
      return;
    }
    if (closed) {
      say("O contorno está fechado: desfaça o último canto ou apague-o para mudar.");
      return;
    }
    vertices.push(event.latlng.wrap());
    redraw();
    say(
      "Canto " + vertices.length + " marcado." +
        (vertices.length >= 3 ? " Toque em “Fechar contorno” quando terminar." : "")
    );
  });

  undoButton.addEventListener("click", function () {
    if (closed) {
      closed = false;
    } else {
      vertices.pop();
    }
    redraw();
    say("Contorno aberto, com " + cornerWord(vertices.length) + ".");
  });
  closeButton.addEventListener("click", close);
  clearButton.addEventListener("click", function () {
    vertices = [];
    closed = false;
    redraw();
    say("Contorno apagado.");
  });
  document.querySelectorAll("input[name=shape]").forEach(function (radio) {
    radio.addEventListener("change", function () {
      showShape();
      say(shape() === "polygon"
        ? "Toque em cada canto da obra no mapa."
        : "Clique no mapa onde fica a obra.");
    });
  });
  input.showTyped(map, lon, lat, function (latlng) {
    pointMarker = markPoint(latlng);
  });

  // What the page came back with: the contour drawn (closed), the point typed or clicked.
  if (area.value) {
    try {
      var ring = JSON.parse(area.value).coordinates[0];
      vertices = ring.slice(0, ring.length - 1).map(function (p) {
        return L.latLng(p[1], p[0]);
      });
      closed = vertices.length >= 3;
    } catch (error) {
      vertices = [];
    }
  }
  redraw();
  var typed = input.typed(lon, lat);
  if (typed) {
    pointMarker = markPoint(typed);
  }
  showShape();
  // Open on what the page came back with, not on the whole municipality.
  if (shape() === "polygon" && vertices.length) {
    map.fitBounds(L.latLngBounds(vertices).pad(0.5), { maxZoom: 18, animate: false });
    if (closed) {
      say("Contorno fechado com " + cornerWord(vertices.length) + ".");
    }
  } else if (shape() !== "polygon" && typed) {
    map.setView(typed, Math.max(map.getZoom(), 17), { animate: false });
  }
});
