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
  // On a phone the map is below the fold and built only when it comes near
  // (maps/map-loader.js); what uses it waits for it.
  // The choice of what a tap sets shows at once, above where the map will be: shown when the
  // map is built, it would push the map down under a scrolling thumb.
  var input = window.CtrPointInput;
  var targetBox = document.getElementById("alvo-mapa");
  if (input && targetBox && document.getElementById("mapa")) {
    targetBox.hidden = false;
  }
  if (input) {
    input.whenPageMap(setUpMap);
  }

  function setUpMap(map) {
    var frame = document.getElementById("mapa");
    var say = input.statusLine(document.getElementById("mapa-status"));
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
      if (name === "origin") {
        checkOrigin();
      }
    }

    // --- the registered worksite ------------------------------------------------------------
    // The recent worksite chosen (offline/app.js, event "ctr:obra"): when it is registered, an
    // origin outside its polygon, or its point when it has none, beyond the tolerance the
    // server's rule ORIGIN_OUTSIDE_WORKSITE applies (the bundle's tolerance_m) is said before
    // issuing. Another address typed leaves that worksite.
    var form = document.getElementById("form-ctr");
    var warning = document.getElementById("aviso-origem-obra");
    var addressInput = document.getElementById("id_worksite_address");
    var worksite = null;
    var EARTH_M = 6371008.8;

    function insideRing(ring, lon, lat) {
      var inside = false;
      for (var i = 0, j = ring.length - 1; i < ring.length; j = i++) {
        var xi = ring[i][0], yi = ring[i][1], xj = ring[j][0], yj = ring[j][1];
        if (yi > lat !== yj > lat && lon < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) {
          inside = !inside;
        }
      }
      return inside;
    }

    // Metres from `latlng` to the polygon's edge (0 inside), on a plane tangent at the point:
    // exact enough at a worksite's scale.
    function metresToArea(rings, latlng) {
      var inHole = rings.slice(1).some(function (ring) {
        return insideRing(ring, latlng.lng, latlng.lat);
      });
      if (insideRing(rings[0], latlng.lng, latlng.lat) && !inHole) {
        return 0;
      }
      var kx = ((Math.PI / 180) * EARTH_M) * Math.cos((latlng.lat * Math.PI) / 180);
      var ky = (Math.PI / 180) * EARTH_M;
      var best = Infinity;
      rings.forEach(function (ring) {
        for (var i = 1; i < ring.length; i++) {
          var ax = (ring[i - 1][0] - latlng.lng) * kx, ay = (ring[i - 1][1] - latlng.lat) * ky;
          var bx = (ring[i][0] - latlng.lng) * kx, by = (ring[i][1] - latlng.lat) * ky;
          var dx = bx - ax, dy = by - ay;
          var length2 = dx * dx + dy * dy;
          var t = length2 ? Math.max(0, Math.min(1, -(ax * dx + ay * dy) / length2)) : 0;
          best = Math.min(best, Math.hypot(ax + t * dx, ay + t * dy));
        }
      });
      return best;
    }

    function metres(value) {
      if (value < 1000) {
        return Math.round(value) + " m";
      }
      return (value / 1000).toFixed(1).replace(".", ",") + " km";
    }

    function checkOrigin() {
      if (!warning) {
        return;
      }
      var latlng = worksite && worksite.registered && input.typed(points.origin.lon, points.origin.lat);
      var away = 0;
      if (latlng) {
        away = worksite.area
          ? metresToArea(worksite.area, latlng)
          : map.distance(latlng, L.latLng(worksite.point[1], worksite.point[0]));
      }
      var tolerance = latlng ? Number(worksite.tolerance_m) || 0 : 0;
      if (!latlng || away <= tolerance) {
        warning.hidden = true;
        warning.textContent = "";
        return;
      }
      warning.textContent =
        "A origem está a " +
        metres(away) +
        (worksite.area ? " da área da obra cadastrada (" : " da obra cadastrada (") +
        worksite.address +
        "), além da tolerância de " +
        String(tolerance).replace(".", ",") +
        " m; confira antes de emitir.";
      warning.hidden = false;
    }

    if (form) {
      form.addEventListener("ctr:obra", function (event) {
        worksite = event.detail;
        checkOrigin();
      });
    }
    if (addressInput) {
      addressInput.addEventListener("input", function () {
        if (worksite && addressInput.value.trim() !== worksite.address) {
          worksite = null;
          checkOrigin();
        }
      });
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

    // Once the origin is filled (a tap with "Origem" chosen, the device's
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
    // not a receiving area, and the popup offers "Usar como destino".
    map.on("preclick", function (event) {
      var name = target();
      var on = event.originalEvent && event.originalEvent.target;
      if (name === "origin" && on && on.classList && on.classList.contains("leaflet-interactive")) {
        return;
      }
      pick(name, event.latlng);
    });

    // The driver at the worksite puts the origin where the phone is,
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

    // One listener on the map's box, in the capture phase (Leaflet stops a click inside a popup
    // from reaching the map): a popup's content is drawn again whenever Leaflet updates it (its
    // size is set to the map's when it opens), so a listener on the button of one drawing
    // would miss a click on the next one.
    map.getContainer().addEventListener(
      "click",
      function (event) {
        var button = event.target.closest && event.target.closest(".ctr-use-destination");
        if (!button) {
          return;
        }
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
      },
      true
    );

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
  }
})();
