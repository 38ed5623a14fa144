/* What every page shares on a phone: the header's "Menu" button opens and closes the nav
 * (aria-expanded; on a wide screen the nav is always shown and the button stays hidden by
 * CSS), and data tables become one card per row (each cell gets its column's header as
 * data-label, which the CSS shows before the value). Without JavaScript the nav is simply
 * open and tables scroll inside their frame. */
(function () {
  "use strict";

  var button = document.getElementById("menu-botao");
  var nav = document.getElementById("menu");
  if (button && nav) {
    var header = button.closest(".site-header");
    header.classList.add("has-menu-button");
    button.hidden = false;
    var setOpen = function (open) {
      button.setAttribute("aria-expanded", open ? "true" : "false");
      header.classList.toggle("menu-open", open);
    };
    button.addEventListener("click", function () {
      setOpen(button.getAttribute("aria-expanded") !== "true");
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        setOpen(false);
        button.focus();
      }
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.data-table"), function (table) {
    var headRow = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!headRow) {
      return;
    }
    var labels = [];
    Array.prototype.forEach.call(headRow.cells, function (cell) {
      for (var i = 0; i < (cell.colSpan || 1); i++) {
        labels.push(cell.textContent.trim());
      }
    });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        var column = 0;
        Array.prototype.forEach.call(row.cells, function (cell) {
          if (labels[column] && !cell.hasAttribute("data-label")) {
            cell.setAttribute("data-label", labels[column]);
          }
          column += cell.colSpan || 1;
        });
      });
    });
    table.classList.add("stackable");
  });
})();
