// "Gerador vinculado" of the case form: suggestions as you type, from
// GET /fiscalizacao/processos/geradores/?q= into the box's <datalist> (the browser shows them
// and keyboards and screen readers know them). Without JavaScript the box takes a CPF/CNPJ.
(function () {
  "use strict";

  function setUp(input) {
    var list = document.getElementById(input.getAttribute("list"));
    var status = document.getElementById("geradores-status");
    if (!list || !list.getAttribute("data-url") || !window.fetch) {
      return;
    }
    var url = list.getAttribute("data-url");
    var timer = 0;
    var asked = "";
    var controller = null;

    function fill(results) {
      list.textContent = "";
      results.forEach(function (item) {
        var option = document.createElement("option");
        option.value = item.value;
        list.appendChild(option);
      });
      if (status) {
        status.textContent = results.length
          ? results.length + " gerador(es) encontrado(s)."
          : "Nenhum gerador encontrado.";
      }
    }

    function ask() {
      var text = input.value.trim();
      // A chosen suggestion ("CPF/CNPJ — nome") needs no new search.
      if (text.length < 2 || text === asked || text.indexOf(" — ") > 0) {
        return;
      }
      asked = text;
      if (controller) {
        controller.abort();
      }
      controller = window.AbortController ? new AbortController() : null;
      fetch(url + "?q=" + encodeURIComponent(text), {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
        signal: controller ? controller.signal : undefined,
      })
        .then(function (response) {
          return response.ok ? response.json() : { results: [] };
        })
        .then(function (body) {
          if (input.value.trim() === text) {
            fill(body.results || []);
          }
        })
        .catch(function () {});
    }

    input.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(ask, 200);
    });
  }

  document.querySelectorAll("input[data-suggest=generators]").forEach(setUp);
})();
