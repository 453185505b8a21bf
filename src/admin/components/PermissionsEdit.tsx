/*
 * Edit field for `permissions` on users and groups: a multi-select of the codenames known to the
 * permission catalog instead of free text. New codenames come from the permission picker.
 */
import React, { useEffect, useState } from 'react';
import { ApiClient, flat, type EditPropertyProps } from 'adminjs';
import { Box, FormGroup, Label, Select, Text } from '@adminjs/design-system';

const api = new ApiClient();

/** A permission the catalog knows: its codename and human name. */
interface KnownPermission {
  codename: string;
  name: string;
}

declare global {
  interface Window {
    /** AdminJS's initial state; the site's root path is what links need. */
    REDUX_STATE?: { paths?: { rootPath?: string } };
  }
}

const PermissionsEdit = ({ property, record, onChange }: EditPropertyProps) => {
  const [known, setKnown] = useState<KnownPermission[]>([]);
  const current = ((record && flat.get(record.params, property.path)) || []) as string[];

  useEffect(() => {
    api
      .resourceAction({ resourceId: 'Permission', actionName: 'codenames' })
      .then((r) => setKnown((r.data.codenames as KnownPermission[] | undefined) || []))
      .catch(() => setKnown([]));
  }, []);

  const names = new Map(known.map((p) => [p.codename, p.name]));
  const option = (codename: string) => ({
    value: codename,
    label: names.has(codename) ? `${codename} (${names.get(codename)})` : codename,
  });
  const options = known.map((p) => option(p.codename));
  const value = current.map(option);
  const root = window.REDUX_STATE?.paths?.rootPath ?? '';

  return (
    <FormGroup>
      <Label htmlFor={`${property.path}-select`}>{property.label}</Label>
      <Box data-testid={`${property.path}-select`}>
        <Select
          inputId={`${property.path}-select`}
          isMulti
          value={value}
          options={options}
          onChange={(selected) =>
            onChange(
              property.path,
              ((selected as { value: string }[] | null) || []).map((s) => s.value),
            )
          }
        />
      </Box>
      <Text variant="sm" mt="sm" color="grey60">
        Pick from the known permissions. To grant a database, collection or task that is not listed, use the{' '}
        <a href={`${root}/resources/Permission/actions/picker`}>permission picker</a>.
      </Text>
    </FormGroup>
  );
};

export default PermissionsEdit;
