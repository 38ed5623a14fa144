// Where the operator's device was when it confirmed a load.
// The browser asks the operator for permission (the geolocation prompt) the first time a load
// is opened, or at once when the permission was granted before; the fix fills the hidden
// location fields of every receive form. Refused, unavailable or slow: the fields stay empty
// and the reception goes on as before, without a location (and without a finding).
// The asking and its wording are maps/device-location.js's (CtrDeviceLocation), loaded before.
// No inline handlers: the CSP allows only our files.
(function () {
  "use strict";

  var status = document.getElementById("local-aparelho");
  if (!status) {
    return;
  }
  var device = window.CtrDeviceLocation;
  if (!device || !device.available()) {
    status.textContent = "Este navegador não informa a localização: o recebimento vale do mesmo jeito.";
    return;
  }
  var asked = false;

  function say(text) {
    status.textContent = text;
  }

  function fill(fix) {
    var lat = fix.lat.toFixed(6);
    var lon = fix.lon.toFixed(6);
    document.querySelectorAll("form.receive-form").forEach(function (form) {
      var latField = form.querySelector("input[name$=location_lat]");
      var lonField = form.querySelector("input[name$=location_lon]");
      if (latField && lonField) {
        latField.value = lat;
        lonField.value = lon;
      }
    });
    document.body.setAttribute("data-location-ready", "");
    var precision = device.precision(fix);
    say(
      "A localização deste aparelho será enviada com o recebimento" +
        (precision ? " (" + precision + ")." : ".")
    );
  }

  function refused(reason) {
    document.body.setAttribute("data-location-ready", "none");
    say(reason + ": o recebimento vale do mesmo jeito, sem o local.");
  }

  function ask() {
    if (asked) {
      return;
    }
    asked = true;
    say("Obtendo a localização deste aparelho…");
    device.locate(fill, refused);
  }

  // Opening a load is the operator's own gesture: the prompt then is expected, not a surprise.
  document.querySelectorAll("details.reception-row").forEach(function (row) {
    row.addEventListener("toggle", function () {
      if (row.open) {
        ask();
      }
    });
  });
  if (navigator.permissions && navigator.permissions.query) {
    navigator.permissions.query({ name: "geolocation" }).then(function (result) {
      if (result.state === "granted" || document.querySelector("details.reception-row[open]")) {
        ask();
      }
    }, function () {});
  }
})();
