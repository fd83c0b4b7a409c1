// "Copy" buttons of the account pages: a button with data-copy="<element id>" copies that input's
// or textarea's value (an API key shown once, an embed snippet, a short link) to the clipboard and
// says so on the button. Without JavaScript, or where the clipboard is refused (an address other
// than localhost over plain HTTP), the field stays selectable by hand, and the button says that.

for (const button of document.querySelectorAll('button[data-copy]')) {
  if (!(button instanceof HTMLButtonElement)) continue;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.dataset.copy ?? '');
    if (!(field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement)) return;
    const label = button.textContent;
    try {
      await navigator.clipboard.writeText(field.value);
      button.textContent = 'Copied';
    } catch {
      field.select();
      button.textContent = 'Selected: press Ctrl+C';
    }
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}
