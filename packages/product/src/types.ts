/** The `product` format (spec: `product` fields; JS SDK `ProductProfile`). */
export interface ProductPrice {
  amount: number;
  /** ISO 4217, upper case. */
  currency?: string;
  formatted?: string;
}

export interface ProductVariant {
  id?: string;
  sku?: string;
  title?: string;
  values?: Record<string, string>;
  price?: ProductPrice;
  /** Present when the price is discounted: what it was before. */
  sale?: { originalPrice: ProductPrice };
  availability: { inStock: boolean; text?: string };
  images?: Array<{ url: string; alt?: string }>;
}

export interface ProductProfile {
  title: string;
  brand?: string;
  category?: string;
  url: string;
  description?: string;
  variants: ProductVariant[];
}

export interface ProductResult {
  product: ProductProfile | null;
  /** Why `product` is null, or what was partial. */
  warning?: string;
  /** Where the data came from (README). */
  source?: 'json-ld' | 'microdata' | 'opengraph';
}
