/**
 * A pin's picture, generated: two colours and a shape picked from the pin's ID, with its title's
 * first letter. Nothing is fetched (the demo's image URLs point at hosts the page must not reach).
 */
function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function Placeholder({ seed, label, height = 160 }: { seed: string; label: string; height?: number }) {
  const h = hash(seed);
  const hue = h % 360;
  const hue2 = (hue + 40 + ((h >>> 9) % 80)) % 360;
  const id = `g${h.toString(36)}`;
  const circle = (h >>> 3) % 2 === 0;
  return (
    <svg className="placeholder" viewBox={`0 0 200 ${height}`} role="img" aria-label={label} preserveAspectRatio="xMidYMid slice">
      <defs>
        <linearGradient id={id} x1="0" y1="0" x2="1" y2="1">
          <stop offset="0" stopColor={`hsl(${hue} 70% 72%)`} />
          <stop offset="1" stopColor={`hsl(${hue2} 65% 52%)`} />
        </linearGradient>
      </defs>
      <rect width="200" height={height} fill={`url(#${id})`} />
      {circle ? <circle cx="150" cy={height * 0.3} r={height * 0.18} fill="rgba(255,255,255,0.35)" /> : <path d={`M0 ${height} L80 ${height * 0.45} L140 ${height * 0.75} L200 ${height * 0.55} L200 ${height} Z`} fill="rgba(255,255,255,0.3)" />}
      <text x="16" y={height - 18} fontSize="40" fontFamily="system-ui, sans-serif" fill="rgba(255,255,255,0.9)">
        {(label.trim()[0] ?? '?').toUpperCase()}
      </text>
    </svg>
  );
}

/** A person's avatar: their initial on a colour picked from their ID. */
export function Avatar({ seed, name, size = 32 }: { seed: string; name: string; size?: number }) {
  const hue = hash(seed) % 360;
  return (
    <svg className="avatar" width={size} height={size} viewBox="0 0 32 32" role="img" aria-label={name}>
      <circle cx="16" cy="16" r="16" fill={`hsl(${hue} 55% 50%)`} />
      <text x="16" y="21" textAnchor="middle" fontSize="15" fontFamily="system-ui, sans-serif" fill="#fff">
        {(name[0] ?? '?').toUpperCase()}
      </text>
    </svg>
  );
}
