SELECT `payload_size`, MIN(`_dlt_load_id`) OVER () AS `_co_first_seen` FROM `acme-analytics-42`.`raw_events`.`events` WHERE NOT `payload_size` IS NULL ORDER BY `_dlt_load_id` DESC LIMIT 50
