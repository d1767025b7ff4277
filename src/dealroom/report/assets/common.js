/* dealroom pages: the data registry (scripts beside the page call DR.put), HTML escaping. */
window.DR = {
  data: {}, waiting: {},
  put(key, data) {
    this.data[key] = data;
    (this.waiting[key] || []).forEach((done) => done(data));
    delete this.waiting[key];
  },
  load(key, src) {
    return new Promise((resolve, reject) => {
      if (key in this.data) { resolve(this.data[key]); return; }
      (this.waiting[key] = this.waiting[key] || []).push(resolve);
      if (document.querySelector(`script[data-key="${key}"]`)) return;
      const s = document.createElement("script");
      s.src = src; s.dataset.key = key;
      s.onerror = () => reject(new Error("cannot load " + src));
      document.head.appendChild(s);
    });
  },
};
function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => (
    { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
function fmt(n, digits) {
  if (n === null || n === undefined || Number.isNaN(n)) return "–";
  if (digits !== undefined) return Number(n).toFixed(digits);
  return Number(n).toLocaleString("en-US");
}
