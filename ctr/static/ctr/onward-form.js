/* "Emitir CTR de saída": the vehicle and equipment lists hold every registered transporter's
 * fleet (each option names its transporter in data-transporter); once a transporter is
 * chosen, only its own show, and a choice of another's is cleared. Without JavaScript the
 * lists show everything, labelled with the transporter, and the rules refuse a vehicle that
 * is not the transporter's. */
(function () {
  "use strict";

  var transporter = document.getElementById("id_transporter");
  if (!transporter) {
    return;
  }
  var fleets = ["id_vehicle", "id_equipment"]
    .map(function (id) {
      return document.getElementById(id);
    })
    .filter(Boolean);

  function narrow() {
    var chosen = transporter.value;
    fleets.forEach(function (select) {
      var kept = 0;
      var only = null;
      Array.prototype.forEach.call(select.options, function (option) {
        var owner = option.getAttribute("data-transporter");
        if (owner === null) {
          return; // the empty choice
        }
        var mine = !chosen || owner === chosen;
        option.hidden = !mine;
        option.disabled = !mine;
        if (mine) {
          kept += 1;
          only = option;
        }
      });
      var selected = select.options[select.selectedIndex];
      if (selected && selected.disabled) {
        select.value = "";
      }
      // A transporter with one vehicle: it is the one (equipment stays optional).
      if (chosen && kept === 1 && select.required && !select.value) {
        select.value = only.value;
      }
    });
  }

  transporter.addEventListener("change", narrow);
  narrow();
})();
