import { describe, expect, it } from 'vitest';
import { linkTarget } from '../../../src/links/link-scope.js';

describe('the collection a link reads', () => {
  it('is the database and collection of a path below one, decoded, in either area', () => {
    expect(linkTarget('/api/data_store/data/lab/stations/')).toEqual({ area: 'data_store', db: 'lab', col: 'stations' });
    expect(linkTarget('/api/data_store/data/lab/stations/?format=csv&query=%7B%7D')).toEqual({
      area: 'data_store',
      db: 'lab',
      col: 'stations',
    });
    expect(linkTarget('/api/data_store/data/lab/stations/abc123/')).toEqual({ area: 'data_store', db: 'lab', col: 'stations' });
    expect(linkTarget('/api/catalog/data/cat/data%20sets/')).toEqual({ area: 'catalog', db: 'cat', col: 'data sets' });
    expect(linkTarget('/api/data_store/data/lab/st%2Fations/')).toEqual({ area: 'data_store', db: 'lab', col: 'st/ations' });
  });

  it('is none for the lists of databases and collections, and for paths no link may reach', () => {
    expect(linkTarget('/api/data_store/data/')).toBeUndefined();
    expect(linkTarget('/api/data_store/data/lab/')).toBeUndefined();
    expect(linkTarget('/api/data_store/data/lab/?format=csv')).toBeUndefined();
    expect(linkTarget('/api/user/')).toBeUndefined();
  });
});
