/* /denunciar/: a click on the map (or the device's location) fills the point; before the
 * first submit, open reports near the point are offered ("É uma destas?") so that the citizen
 * may follow one instead of reporting the same dumping again. Without JavaScript the server
 * does the same check and shows the same list. The map is folium's; its Leaflet object is the
 * global named in #mapa[data-map-var]. */
(function () {
  "use strict";

  var form = document.getElementById("denuncia");
  var frame = document.getElementById("mapa");
  if (!form || !frame || typeof L === "undefined") {
    return;
  }
  var map = window[frame.getAttribute("data-map-var")];
  var lonInput = document.getElementById("id_longitude");
  var latInput = document.getElementById("id_latitude");
  var geoButton = document.getElementById("usar-localizacao");
  var statusLine = document.getElementById("geo-status");
  var nearbyBox = document.getElementById("proximas");
  var nearbyList = document.getElementById("proximas-lista");
  if (!map || !lonInput || !latInput) {
    return;
  }

  var chosen = null;
  var checkedPoint = null; // "lon,lat" already checked for nearby reports

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
        radius: 9,
        color: "#ffffff",
        weight: 3,
        fillColor: "#b91c1c",
        fillOpacity: 1,
        interactive: false,
      }).addTo(map);
    }
  }

  function pointChanged() {
    // A new point needs a new check, and a new confirmation.
    checkedPoint = null;
    if (nearbyBox) {
      nearbyBox.hidden = true;
    }
  }

  function choose(latlng) {
    latlng = latlng.wrap();
    latInput.value = formatCoordinate(latlng.lat);
    lonInput.value = formatCoordinate(latlng.lng);
    mark(latlng);
    pointChanged();
    say("Local marcado: latitude " + latInput.value + ", longitude " + lonInput.value + ".");
  }

  map.on("click", function (event) {
    choose(event.latlng);
  });

  // A point shown again after a server round trip (errors, or the nearby list).
  (function showInitial() {
    var lat = parseCoordinate(latInput.value);
    var lon = parseCoordinate(lonInput.value);
    if (lat !== null && lon !== null && Math.abs(lat) <= 90 && Math.abs(lon) <= 180) {
      mark(L.latLng(lat, lon));
    }
  })();

  function fromInputs() {
    var lat = parseCoordinate(latInput.value);
    var lon = parseCoordinate(lonInput.value);
    pointChanged();
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
          map.setView(latlng, Math.max(map.getZoom(), 17));
        },
        function () {
          say("Não foi possível obter a sua localização. Clique no mapa ou digite as coordenadas.");
        },
        { enableHighAccuracy: true, timeout: 10000, maximumAge: 60000 }
      );
    });
  }

  // --- "É uma destas?" ---------------------------------------------------------------------

  function item(report) {
    var li = document.createElement("li");
    var link = document.createElement("a");
    link.href = report.follow_url;
    link.textContent = "Acompanhar " + report.protocol;
    var meta = document.createElement("span");
    meta.className = "intake-nearby-meta";
    meta.textContent =
      " " + report.category_label + " · " + report.status_label + " · recebida em " +
      report.created_on + " · a " + report.distance_m + " m";
    li.appendChild(link);
    li.appendChild(meta);
    return li;
  }

  function showNearby(reports) {
    while (nearbyList.firstChild) {
      nearbyList.removeChild(nearbyList.firstChild);
    }
    reports.forEach(function (report) {
      nearbyList.appendChild(item(report));
    });
    var lost = document.getElementById("fotos-de-novo");
    if (lost) {
      lost.hidden = true; // the files are still selected: nothing was sent yet
    }
    nearbyBox.hidden = false;
    nearbyBox.scrollIntoView({ behavior: "auto", block: "start" });
    var heading = document.getElementById("proximas-titulo");
    if (heading) {
      heading.setAttribute("tabindex", "-1");
      heading.focus();
    }
  }

  form.addEventListener("submit", function (event) {
    var lon = parseCoordinate(lonInput.value);
    var lat = parseCoordinate(latInput.value);
    var key = lonInput.value + "," + latInput.value;
    // "É outra, enviar mesmo assim" is a submit button with confirm_new: let it through.
    var confirmed = event.submitter && event.submitter.name === "confirm_new";
    if (confirmed || lon === null || lat === null || checkedPoint === key) {
      return; // the server validates, and checks again
    }
    event.preventDefault();
    var url = form.getAttribute("data-nearby-url") + "?lon=" + encodeURIComponent(lon) +
      "&lat=" + encodeURIComponent(lat);
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) {
        return response.ok ? response.json() : { reports: [] };
      })
      .catch(function () {
        return { reports: [] };
      })
      .then(function (data) {
        checkedPoint = key;
        if (data.reports && data.reports.length && nearbyBox && nearbyList) {
          showNearby(data.reports);
        } else {
          // form.submit() skips this handler; the server still checks for nearby reports.
          HTMLFormElement.prototype.submit.call(form);
        }
      });
  });
})();
