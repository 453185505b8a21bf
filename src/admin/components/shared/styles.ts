/**
 * Inline styles shared by the admin site's pages: plain tables (the design system's table is
 * made for resource lists) and the frame of a question to confirm before something is destroyed.
 */
import type { CSSProperties } from 'react';

export const table: CSSProperties = { width: '100%', borderCollapse: 'collapse', fontSize: '14px' };
export const cell: CSSProperties = { textAlign: 'left', padding: '6px 10px', borderBottom: '1px solid #eeeeef', verticalAlign: 'top' };
export const head: CSSProperties = { ...cell, fontWeight: 600, color: '#454655' };
export const confirmFrame: CSSProperties = { border: '2px solid #c20012', borderRadius: '4px', background: '#fff5f5' };
