/* What the pages that take a point on a folium map share ("Onde descartar", "Denunciar",
 * "Emitir CTR"): coordinates in pt-BR text inputs, a marker that follows them, the device's
 * location, the layer list on a phone. Loaded before the page's own script; without
 * JavaScript the forms still work with typed coordinates. */
(function () {
  "use strict";

  // pt-BR decimal comma; the forms accept a comma or a dot.
  function format(value) {
    return value.toFixed(6).replace(".", ",");
  }

  function parse(text) {
    var value = parseFloat(String(text).trim().replace(",", "."));
    return isFinite(value) ? value : null;
  }

  /** The point typed in the pair of inputs, or null while it is not a coordinate. */
  function typed(lonInput, latInput) {
    var lat = parse(latInput.value);
    var lon = parse(lonInput.value);
    if (lat === null || lon === null || Math.abs(lat) > 90 || Math.abs(lon) > 180) {
      return null;
    }
    return L.latLng(lat, lon);
  }

  /** Writes a clicked point into the inputs (longitude wrapped into ±180) and returns it. */
  function fill(lonInput, latInput, latlng) {
    latlng = latlng.wrap();
    latInput.value = format(latlng.lat);
    lonInput.value = format(latlng.lng);
    return latlng;
  }

  /** Calls handler() when either input changes (typed coordinates show on the map). */
  function whenTyped(lonInput, latInput, handler) {
    lonInput.addEventListener("change", handler);
    latInput.addEventListener("change", handler);
  }

  /** Typed coordinates show on the map: the marker moves there, and the map pans when the
   * point is out of view. `changed`, if given, runs first on every change. */
  function showTyped(map, lonInput, latInput, mark, changed) {
    whenTyped(lonInput, latInput, function () {
      if (changed) {
        changed();
      }
      var latlng = typed(lonInput, latInput);
      if (latlng) {
        mark(latlng);
        if (!map.getBounds().contains(latlng)) {
          map.panTo(latlng);
        }
      }
    });
  }

  /** A status line for screen readers and sighted users alike (aria-live in the page). */
  function statusLine(element) {
    return function (message) {
      if (element) {
        element.textContent = message;
      }
    };
  }

  /** One circle marker, made at the first point and moved afterwards. */
  function movingMarker(map, style) {
    var marker = null;
    return function (latlng) {
      if (marker) {
        marker.setLatLng(latlng);
      } else {
        marker = L.circleMarker(latlng, Object.assign({ interactive: false }, style)).addTo(map);
      }
      return marker;
    };
  }

  /** Shows the "use my location" button where the device can tell (maps/device-location.js,
   * CtrDeviceLocation); a tap chooses the device's position (choose(latlng), as a click on the
   * map would) and centres the map there at `zoom` or closer. `say` is the status line beside
   * the button: the point and its precision, or why there is none (refused, no fix, too
   * slow); the map still takes clicks. */
  function offerLocation(map, button, say, choose, zoom) {
    var device = window.CtrDeviceLocation;
    if (!button || !device || !device.available()) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      button.disabled = true;
      say("Obtendo a sua localização…");
      device.locate(
        function (fix) {
          button.disabled = false;
          var latlng = L.latLng(fix.lat, fix.lon);
          choose(latlng);
          map.setView(latlng, Math.max(map.getZoom(), zoom));
          var precision = device.precision(fix);
          say(
            "Localização do aparelho: latitude " + format(fix.lat) + ", longitude " +
              format(fix.lon) + (precision ? ", " + precision : "") + "."
          );
        },
        function (reason) {
          button.disabled = false;
          say(reason + ": marque o ponto no mapa ou digite as coordenadas.");
        }
      );
    });
  }

  /** On a phone the expanded layer list would cover the map: start collapsed (its button
   * expands it); with closeOnMapClick, a tap on the map closes it again. */
  function collapseLayersOnPhone(map, closeOnMapClick) {
    var layerControl = map.ctrLayerControl;
    if (!layerControl || !window.matchMedia("(max-width: 640px)").matches) {
      return;
    }
    layerControl.collapse();
    if (closeOnMapClick) {
      map.on("click", function () {
        layerControl.collapse();
      });
    }
  }

  /** callback(map) with the folium map of #mapa once it is built (maps/map-loader.js builds
   * it when it comes near the viewport; its Leaflet object is the global named in
   * data-map-var). */
  function whenPageMap(callback) {
    if (window.CtrMaps) {
      window.CtrMaps.whenMap("mapa", callback);
    }
  }

  window.CtrPointInput = {
    format: format,
    parse: parse,
    typed: typed,
    fill: fill,
    whenTyped: whenTyped,
    showTyped: showTyped,
    statusLine: statusLine,
    movingMarker: movingMarker,
    offerLocation: offerLocation,
    collapseLayersOnPhone: collapseLayersOnPhone,
    whenPageMap: whenPageMap,
  };
})();
