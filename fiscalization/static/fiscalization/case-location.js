/* "Usar minha localização" on the case form: the inspector at the spot
 * puts the device's position in the latitude and longitude, written as the map pages write a
 * point (six decimals, comma). Shown only where the browser can ask (maps/device-location.js);
 * the coordinates can always be typed. */
(function () {
  "use strict";

  var where = window.CtrDeviceLocation;
  var button = document.getElementById("usar-localizacao");
  var status = document.getElementById("geo-status");
  var lat = document.getElementById("id_latitude");
  var lon = document.getElementById("id_longitude");
  if (!where || !button || !lat || !lon || !where.available()) {
    return;
  }

  function format(value) {
    return value.toFixed(6).replace(".", ",");
  }

  button.hidden = false;
  button.addEventListener("click", function () {
    button.disabled = true;
    status.textContent = "Obtendo a localização do aparelho…";
    where.locate(
      function (fix) {
        lat.value = format(fix.lat);
        lon.value = format(fix.lon);
        var precision = where.precision(fix);
        status.textContent = "Local preenchido com a posição do aparelho" +
          (precision ? " (" + precision + ")" : "") + ".";
        button.disabled = false;
      },
      function (reason) {
        status.textContent = reason + ": digite as coordenadas.";
        button.disabled = false;
      }
    );
  });
})();
