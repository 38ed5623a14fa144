// Two things every form of the site gets (loaded on every page by maps/base.html):
// 1. Confirm before an irreversible step. A form with data-confirm="message" asks in a
//    <dialog> before it is sent; "{valor}" in the message is replaced by the value of the
//    field named in data-confirm-value. Such forms carry <input name="etapa" value="revisar">:
//    without JavaScript the server answers with a confirmation page instead (same question),
//    and once confirmed here the field is removed so that the post acts at once. Its required
//    fields are checked first: an empty one gets its message beside it (data-required-message,
//    as the server would say it) and the focus, and no dialog asks to confirm a post the
//    server would send back.
// 2. "Enviando…": a POST form that is being sent disables its buttons and says so, so that a
//    slow mobile network does not end in a double post.
// No inline handlers: the CSP allows only our files and nonce'd scripts.
(function () {
  "use strict";

  var dialog = null;
  var pending = null;

  function buildDialog() {
    dialog = document.createElement("dialog");
    dialog.className = "confirm-dialog";
    dialog.setAttribute("aria-labelledby", "confirm-dialog-title");
    dialog.setAttribute("aria-describedby", "confirm-dialog-text");
    dialog.innerHTML =
      '<form method="dialog">' +
      '<h2 id="confirm-dialog-title">Confirme</h2>' +
      '<p id="confirm-dialog-text"></p>' +
      '<p class="confirm-dialog-actions">' +
      '<button type="submit" value="sim" class="button" id="confirm-dialog-yes">Sim</button> ' +
      '<button type="submit" value="nao" class="button button-secondary" autofocus>Voltar</button>' +
      "</p></form>";
    document.body.appendChild(dialog);
    dialog.addEventListener("close", function () {
      var form = pending;
      pending = null;
      if (form && dialog.returnValue === "sim") {
        var step = form.querySelector("input[name=etapa]");
        if (step) {
          step.remove();
        }
        form.setAttribute("data-confirmed", "");
        if (form.requestSubmit) {
          form.requestSubmit();
        } else {
          form.submit();
        }
      }
    });
  }

  function ask(form) {
    if (typeof HTMLDialogElement !== "function") {
      return false; // the server's confirmation page asks instead
    }
    if (!dialog) {
      buildDialog();
    }
    var message = form.getAttribute("data-confirm");
    var field = form.getAttribute("data-confirm-value");
    if (field && form.elements[field]) {
      message = message.replace("{valor}", form.elements[field].value.trim() || "?");
    }
    dialog.querySelector("#confirm-dialog-text").textContent = message;
    var yes = dialog.querySelector("#confirm-dialog-yes");
    yes.textContent = form.getAttribute("data-confirm-yes") || "Sim";
    yes.className = form.hasAttribute("data-confirm-danger") ? "button button-danger" : "button";
    pending = form;
    dialog.returnValue = "";
    dialog.showModal();
    return true;
  }

  function errorNote(input) {
    return document.getElementById(input.id + "-erro");
  }

  function showMissing(input) {
    var note = errorNote(input);
    if (!note) {
      note = document.createElement("ul");
      note.className = "field-errors";
      note.id = input.id + "-erro";
      note.setAttribute("role", "alert");
      note.appendChild(document.createElement("li"));
      input.insertAdjacentElement("afterend", note);
      var described = input.getAttribute("aria-describedby");
      input.setAttribute("aria-describedby", (described ? described + " " : "") + note.id);
    }
    note.firstChild.textContent =
      input.getAttribute("data-required-message") || "Preencha este campo.";
    note.hidden = false;
    input.setAttribute("aria-invalid", "true");
  }

  function clearMissing(input) {
    var note = errorNote(input);
    if (note) {
      note.hidden = true;
      input.removeAttribute("aria-invalid");
    }
  }

  // The first empty required field of the form (after showing every one's message), or null.
  function firstMissing(form) {
    var first = null;
    form.querySelectorAll("input[required], textarea[required], select[required]").forEach(
      function (input) {
        if (input.value.trim()) {
          clearMissing(input);
        } else {
          showMissing(input);
          first = first || input;
        }
      }
    );
    return first;
  }

  document.addEventListener("input", function (event) {
    var input = event.target;
    if (input.id && input.value && input.value.trim() && errorNote(input)) {
      clearMissing(input);
    }
  });

  function markSending(form, submitter) {
    form.setAttribute("data-sending", "");
    form.setAttribute("aria-busy", "true");
    var buttons = form.querySelectorAll("button[type=submit], button:not([type]), input[type=submit]");
    var main = submitter || buttons[0];
    if (main && main.tagName === "BUTTON") {
      main.setAttribute("data-label", main.innerHTML);
      main.textContent = "Enviando…";
    } else if (main) {
      main.setAttribute("data-label", main.value);
      main.value = "Enviando…";
    }
    // After this event: a button disabled now would drop its name=value from the post.
    window.setTimeout(function () {
      buttons.forEach(function (button) {
        button.disabled = true;
      });
    }, 0);
  }

  function reset(form) {
    form.removeAttribute("data-sending");
    form.removeAttribute("aria-busy");
    form.querySelectorAll("[data-label]").forEach(function (button) {
      if (button.tagName === "BUTTON") {
        button.innerHTML = button.getAttribute("data-label");
      } else {
        button.value = button.getAttribute("data-label");
      }
      button.removeAttribute("data-label");
      button.disabled = false;
    });
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || event.defaultPrevented) {
      return;
    }
    if (form.hasAttribute("data-sending")) {
      event.preventDefault(); // already on its way
      return;
    }
    if (form.hasAttribute("data-confirm") && !form.hasAttribute("data-confirmed")) {
      var missing = firstMissing(form);
      if (missing) {
        event.preventDefault();
        missing.focus();
        return;
      }
      if (ask(form)) {
        event.preventDefault();
        return;
      }
    }
    form.removeAttribute("data-confirmed");
    var method = (form.getAttribute("method") || "get").toLowerCase();
    if (method === "post" && !form.hasAttribute("data-sem-enviando") && !form.target) {
      markSending(form, event.submitter);
    }
  });

  // Back to a page kept in the browser's cache: its forms can be sent again.
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      document.querySelectorAll("form[data-sending]").forEach(reset);
    }
  });
})();
