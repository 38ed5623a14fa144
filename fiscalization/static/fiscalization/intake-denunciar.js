/* /denunciar/: a click on the map (or the device's location) fills the point; before the
 * first submit, open reports near the point are offered ("É uma destas?") so that the citizen
 * may follow one instead of reporting the same dumping again. Without JavaScript the server
 * does the same check and shows the same list. The helpers are maps/point-input.js
 * (CtrPointInput), loaded before this script. */
window.CtrPointInput.whenPageMap(function (map) {
  "use strict";

  var points = window.CtrPointInput;
  var form = document.getElementById("denuncia");
  var lonInput = document.getElementById("id_longitude");
  var latInput = document.getElementById("id_latitude");
  var nearbyBox = document.getElementById("proximas");
  var nearbyList = document.getElementById("proximas-lista");
  if (!form || !map || !lonInput || !latInput) {
    return;
  }
  var parseCoordinate = points.parse;
  var say = points.statusLine(document.getElementById("geo-status"));
  var mark = points.movingMarker(map, {
    radius: 9,
    color: "#ffffff",
    weight: 3,
    fillColor: "#b91c1c",
    fillOpacity: 1,
  });
  var checkedPoint = null; // "lon,lat" already checked for nearby reports

  function pointChanged() {
    // A new point needs a new check, and a new confirmation.
    checkedPoint = null;
    if (nearbyBox) {
      nearbyBox.hidden = true;
    }
  }

  function choose(latlng) {
    mark(points.fill(lonInput, latInput, latlng));
    pointChanged();
    say("Local marcado: latitude " + latInput.value + ", longitude " + lonInput.value + ".");
  }

  map.on("click", function (event) {
    choose(event.latlng);
  });

  // A point shown again after a server round trip (errors, or the nearby list).
  var initial = points.typed(lonInput, latInput);
  if (initial) {
    mark(initial);
  }

  points.showTyped(map, lonInput, latInput, mark, pointChanged);
  points.offerLocation(map, document.getElementById("usar-localizacao"), say, choose, 17);

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
});
