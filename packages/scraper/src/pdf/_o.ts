export const other: number = 1;
