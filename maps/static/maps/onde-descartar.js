/* "Onde descartar": a click on the map (or the device's location) fills the search form.
 * The map is folium's; its Leaflet object is the global named in #mapa[data-map-var]. */
(function () {
  "use strict";

  var frame = document.getElementById("mapa");
  if (!frame || typeof L === "undefined") {
    return;
  }
  var map = window[frame.getAttribute("data-map-var")];
  var lonInput = document.getElementById("id_longitude");
  var latInput = document.getElementById("id_latitude");
  var geoButton = document.getElementById("usar-localizacao");
  var statusLine = document.getElementById("geo-status");
  if (!map || !lonInput || !latInput) {
    return;
  }

  var chosen = null;

  // On a phone the expanded layer list would cover the map: start collapsed (its button
  // expands it), and close it again when the map is tapped.
  var layerControl = map.ctrLayerControl;
  if (layerControl && window.matchMedia("(max-width: 640px)").matches) {
    layerControl.collapse();
    map.on("click", function () {
      layerControl.collapse();
    });
  }

  // pt-BR decimal comma; the form accepts a comma or a dot.
  function formatCoordinate(value) {
    return value.toFixed(6).replace(".", ",");
  }

  function parseCoordinate(text) {
    var value = parseFloat(String(text).trim().replace(",", "."));
    return isFinite(value) ? value : null;
  }

  function say(message) {
    if (statusLine) {
      statusLine.textContent = message;
    }
  }

  function mark(latlng) {
    if (chosen) {
      chosen.setLatLng(latlng);
    } else {
      chosen = L.circleMarker(latlng, {
        radius: 8,
        color: "#ffffff",
        weight: 3,
        fillColor: "#111827",
        fillOpacity: 1,
        interactive: false,
      }).addTo(map);
    }
  }

  function choose(latlng) {
    latlng = latlng.wrap();
    latInput.value = formatCoordinate(latlng.lat);
    lonInput.value = formatCoordinate(latlng.lng);
    mark(latlng);
    say(
      "Local escolhido: latitude " + latInput.value + ", longitude " + lonInput.value + "."
    );
  }

  map.on("click", function (event) {
    choose(event.latlng);
  });

  // Typed coordinates show on the map too.
  function fromInputs() {
    var lat = parseCoordinate(latInput.value);
    var lon = parseCoordinate(lonInput.value);
    if (lat === null || lon === null || Math.abs(lat) > 90 || Math.abs(lon) > 180) {
      return;
    }
    var latlng = L.latLng(lat, lon);
    mark(latlng);
    if (!map.getBounds().contains(latlng)) {
      map.panTo(latlng);
    }
  }
  latInput.addEventListener("change", fromInputs);
  lonInput.addEventListener("change", fromInputs);

  // Geolocation needs a secure context (https or localhost).
  if (geoButton && navigator.geolocation && window.isSecureContext) {
    geoButton.hidden = false;
    geoButton.addEventListener("click", function () {
      say("Obtendo a sua localização…");
      navigator.geolocation.getCurrentPosition(
        function (position) {
          var latlng = L.latLng(position.coords.latitude, position.coords.longitude);
          choose(latlng);
          map.setView(latlng, Math.max(map.getZoom(), 16));
        },
        function () {
          say("Não foi possível obter a sua localização. Clique no mapa ou digite as coordenadas.");
        },
        { enableHighAccuracy: true, timeout: 10000, maximumAge: 60000 }
      );
    });
  }
})();
