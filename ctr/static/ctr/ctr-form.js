/* "Emitir CTR": a click on the map fills the origin or the destination (a toggle chooses
 * which), "Usar minha localização" puts the origin where the device is, typed coordinates
 * move the markers, and more waste rows can be added.
 * The map is folium's; its Leaflet object is the global named in #mapa[data-map-var].
 * Without JavaScript the form still works: coordinates are typed, three waste rows exist. */
(function () {
  "use strict";

  // --- waste rows -------------------------------------------------------------------------
  var addButton = document.getElementById("mais-residuo");
  var rowTemplate = document.getElementById("linha-residuo-modelo");
  var rows = document.getElementById("linhas-residuo");
  var total = document.getElementById("id_waste-TOTAL_FORMS");
  var maxForms = document.getElementById("id_waste-MAX_NUM_FORMS");
  if (addButton && rowTemplate && rows && total) {
    addButton.hidden = false;
    addButton.addEventListener("click", function () {
      var index = parseInt(total.value, 10);
      var limit = maxForms ? parseInt(maxForms.value, 10) : 20;
      if (index >= limit) {
        addButton.disabled = true;
        return;
      }
      var html = rowTemplate.innerHTML
        .replace(/__prefix__/g, String(index))
        .replace(/__n__/g, String(index + 1));
      rows.insertAdjacentHTML("beforeend", html);
      total.value = String(index + 1);
      var select = document.getElementById("id_waste-" + index + "-waste_class");
      if (select) {
        select.focus();
      }
      if (index + 1 >= limit) {
        addButton.disabled = true;
      }
    });
  }

  // --- map (helpers: maps/point-input.js, CtrPointInput, loaded before this script) -------
  var input = window.CtrPointInput;
  var map = input && input.pageMap();
  if (!map) {
    return;
  }
  var frame = document.getElementById("mapa");
  var say = input.statusLine(document.getElementById("mapa-status"));
  var targetBox = document.getElementById("alvo-mapa");
  var points = {
    origin: {
      lon: document.getElementById("id_origin_lon"),
      lat: document.getElementById("id_origin_lat"),
      label: "Origem",
      style: { radius: 9, color: "#ffffff", weight: 3, fillColor: "#111827", fillOpacity: 1 },
      marker: null,
    },
    destination: {
      lon: document.getElementById("id_destination_lon"),
      lat: document.getElementById("id_destination_lat"),
      label: "Destino",
      style: { radius: 9, color: "#111827", weight: 4, fillColor: "#facc15", fillOpacity: 1 },
      marker: null,
    },
  };
  if (!points.origin.lon || !points.destination.lon) {
    return;
  }
  var route = null;
  if (targetBox) {
    targetBox.hidden = false;
  }

  // The map's box changes with the layout (the sticky column, a window resized, fonts that
  // load late); Leaflet only watches the window, so tell it, keeping the same centre.
  if (window.ResizeObserver) {
    new ResizeObserver(function () {
      map.invalidateSize({ animate: false });
    }).observe(frame);
  }

  input.collapseLayersOnPhone(map, false);

  function target() {
    var checked = document.querySelector("input[name=map_target]:checked");
    return checked ? checked.value : "origin";
  }

  function setTarget(name) {
    var radio = document.querySelector("input[name=map_target][value=" + name + "]");
    if (radio) {
      radio.checked = true;
    }
  }

  function drawRoute() {
    var a = points.origin.marker;
    var b = points.destination.marker;
    if (a && b) {
      var path = [a.getLatLng(), b.getLatLng()];
      if (route) {
        route.setLatLngs(path);
      } else {
        route = L.polyline(path, {
          color: "#111827",
          weight: 2,
          dashArray: "6 6",
          interactive: false,
        }).addTo(map);
      }
    }
  }

  function mark(name, latlng) {
    var point = points[name];
    if (point.marker) {
      point.marker.setLatLng(latlng);
    } else {
      point.marker = L.circleMarker(latlng, Object.assign({ interactive: false }, point.style))
        .bindTooltip(point.label, {
          permanent: true,
          direction: "top",
          offset: [0, -10],
          className: "ctr-pin-label",
        })
        .addTo(map);
    }
    point.marker.bringToFront();
    drawRoute();
  }

  function choose(name, latlng) {
    var point = points[name];
    mark(name, input.fill(point.lon, point.lat, latlng));
    say(
      point.label +
        " marcada: latitude " +
        point.lat.value +
        ", longitude " +
        point.lon.value +
        "."
    );
  }

  // Issue 25 point 10: once the origin is filled (a tap with "Origem" chosen, the device's
  // position, typed coordinates, a recent worksite), the map works on the destination; a tap
  // moves the origin again only when the driver chooses "Origem" again, and only that tap.
  function originFilled() {
    setTarget("destination");
  }

  function pick(name, latlng) {
    choose(name, latlng);
    if (name === "origin") {
      originFilled();
    }
  }

  // "preclick", not "click": a click on a facility opens its popup, and Leaflet's popup stops
  // the map's click; preclick reaches the map first, wherever the click lands.
  // A tap on a facility (it opens the facility's popup) never moves the origin: a worksite is
  // not a receiving area, and the popup offers "Usar como destino" (issue 25 point 10).
  map.on("preclick", function (event) {
    var name = target();
    var on = event.originalEvent && event.originalEvent.target;
    if (name === "origin" && on && on.classList && on.classList.contains("leaflet-interactive")) {
      return;
    }
    pick(name, event.latlng);
  });

  // Issue 16 points 3 and 8: the driver at the worksite puts the origin where the phone is,
  // as a click on the map would (offline too: the position comes from the device).
  input.offerLocation(
    map,
    document.getElementById("usar-localizacao"),
    input.statusLine(document.getElementById("localizacao-status")),
    function (latlng) {
      pick("origin", latlng);
    },
    17
  );

  // Choosing the destination area, in its select or with "Usar como destino" in a facility's
  // popup, puts the discharge point inside that area (the server's point on its surface,
  // which unlike the centroid is always inside the polygon).
  var facilitySelect = document.getElementById("id_destination_facility");
  var pointsData = document.getElementById("pontos-areas");
  var facilityPoints = pointsData ? JSON.parse(pointsData.textContent) : {};

  function facilityName(id) {
    var option = facilitySelect && facilitySelect.querySelector('option[value="' + id + '"]');
    return option ? option.textContent.trim() : "";
  }

  function useFacility(id) {
    var lonLat = facilityPoints[id];
    if (!lonLat) {
      return false;
    }
    var latlng = L.latLng(lonLat[1], lonLat[0]);
    choose("destination", latlng);
    if (!map.getBounds().contains(latlng)) {
      map.panTo(latlng);
    }
    say(
      "Destino: " +
        (facilityName(id) || "área escolhida") +
        ". Ponto de descarga marcado dentro da área: latitude " +
        points.destination.lat.value +
        ", longitude " +
        points.destination.lon.value +
        "."
    );
    return true;
  }

  if (facilitySelect) {
    facilitySelect.addEventListener("change", function () {
      if (facilitySelect.value) {
        useFacility(facilitySelect.value);
      }
    });
  }

  map.on("popupopen", function (event) {
    var container = event.popup.getElement();
    var button = container && container.querySelector(".ctr-use-destination");
    if (!button) {
      return;
    }
    button.addEventListener("click", function () {
      var id = button.getAttribute("data-facility");
      if (facilitySelect) {
        facilitySelect.value = id;
      }
      if (useFacility(id)) {
        map.closePopup();
        if (!points.origin.marker) {
          setTarget("origin");
        }
        if (facilitySelect) {
          facilitySelect.focus({ preventScroll: true });
        }
      }
    });
  });

  // Typed coordinates (and the values sent back after an error) show on the map too.
  function fromInputs(name, pan) {
    var point = points[name];
    var latlng = input.typed(point.lon, point.lat);
    if (!latlng) {
      return false;
    }
    mark(name, latlng);
    if (pan && !map.getBounds().contains(latlng)) {
      map.panTo(latlng);
    }
    return true;
  }
  ["origin", "destination"].forEach(function (name) {
    input.whenTyped(points[name].lon, points[name].lat, function () {
      if (fromInputs(name, true) && name === "origin") {
        originFilled();
      }
    });
  });
  var hasOrigin = fromInputs("origin", false);
  var hasDestination = fromInputs("destination", false);
  if (hasOrigin) {
    originFilled();
  }
  if (hasOrigin && hasDestination) {
    var bounds = L.latLngBounds([
      points.origin.marker.getLatLng(),
      points.destination.marker.getLatLng(),
    ]);
    map.fitBounds(bounds, { padding: [48, 48], maxZoom: 16, animate: false });
  }
})();
