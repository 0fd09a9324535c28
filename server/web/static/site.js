/* global document, navigator, setTimeout */
// Progressive enhancement only: every page works without this file.
// - [data-copy]: a "Copy" button after the element copies its text (attribution snippets, curl lines).
// - form[data-strip-empty]: empty fields are left out of the submitted URL, so a search reads
//   /events?city=Berkeley rather than /events?q=&city=Berkeley&age_min=&...
(function () {
  'use strict';

  function addCopyButton(el) {
    if (!navigator.clipboard) return;
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy-button secondary';
    button.textContent = 'Copy';
    var label = el.getAttribute('data-copy');
    if (label) button.setAttribute('aria-label', 'Copy ' + label);
    var status = document.createElement('span');
    status.className = 'visually-hidden';
    status.setAttribute('role', 'status');
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(el.textContent || '').then(
        function () {
          button.textContent = 'Copied';
          status.textContent = 'Copied to the clipboard';
          setTimeout(function () {
            button.textContent = 'Copy';
            status.textContent = '';
          }, 2000);
        },
        function () {
          status.textContent = 'Copying failed: select the text and copy it yourself';
        },
      );
    });
    el.insertAdjacentElement('afterend', button);
    button.insertAdjacentElement('afterend', status);
  }

  function stripEmptyOnSubmit(form) {
    form.addEventListener('submit', function () {
      var fields = form.querySelectorAll('input[name], select[name]');
      for (var i = 0; i < fields.length; i++) {
        var f = fields[i];
        if (f.type !== 'checkbox' && f.value === '') f.disabled = true;
      }
      // Re-enable after the navigation has taken the values, so Back shows the form as it was.
      setTimeout(function () {
        for (var i = 0; i < fields.length; i++) fields[i].disabled = false;
      }, 0);
    });
  }

  document.querySelectorAll('[data-copy]').forEach(addCopyButton);
  document.querySelectorAll('form[data-strip-empty]').forEach(stripEmptyOnSubmit);
})();
