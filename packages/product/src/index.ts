// @wds/product — the `product` format from structured data (README.md). Pure: no I/O.
export { extractProduct, extractProductFrom, NO_PRODUCT_WARNING } from './extract';
export type { ProductProfile, ProductVariant, ProductPrice, ProductResult } from './types';
export { extractMenu, NO_MENU_WARNING } from './menu/extract';
export type { MenuProfile, MenuItem, MenuSection, MenuResult } from './menu/types';
